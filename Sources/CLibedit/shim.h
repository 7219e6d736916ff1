#ifndef CACHESH_CLIBEDIT_SHIM_H
#define CACHESH_CLIBEDIT_SHIM_H
#include <stdio.h>
#include <editline/readline.h>
#include <histedit.h>
#endif
