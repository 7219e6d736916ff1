#ifndef CACHESH_CLIBEDIT_SHIM_H
#define CACHESH_CLIBEDIT_SHIM_H
#include <stdio.h>
#include <editline/readline.h>
#include <histedit.h>
#include <wchar.h>

/* Declared by <wchar.h> only under _XOPEN_SOURCE. */
int wcwidth(wchar_t c);

/* The columns a character takes on the terminal (-1: not printable). */
static inline int cachesh_wcwidth(unsigned int c) {
    return wcwidth((wchar_t)c);
}

/* Swift cannot call C variadic functions: one fixed-signature wrapper per use of el_set,
   el_get and history. */

typedef char *(*cachesh_prompt_function)(EditLine *);
typedef unsigned char (*cachesh_key_function)(EditLine *, int);

static inline int cachesh_el_set_prompt(EditLine *el, cachesh_prompt_function f) {
    return el_set(el, EL_PROMPT, f);
}

/* The right prompt; text between two `escape` characters is sent as is and takes no room. */
static inline int cachesh_el_set_rprompt(EditLine *el, cachesh_prompt_function f, char escape) {
    return el_set(el, EL_RPROMPT_ESC, f, escape);
}

static inline int cachesh_el_set_editor(EditLine *el, const char *mode) {
    return el_set(el, EL_EDITOR, mode);
}

static inline int cachesh_el_set_signal(EditLine *el, int handle) {
    return el_set(el, EL_SIGNAL, handle);
}

static inline int cachesh_el_set_history(EditLine *el, History *h) {
    return el_set(el, EL_HIST, history, h);
}

static inline int cachesh_el_add_function(EditLine *el, const char *name, const char *help, cachesh_key_function f) {
    return el_set(el, EL_ADDFN, name, help, f);
}

static inline int cachesh_el_bind(EditLine *el, const char *key, const char *function) {
    return el_set(el, EL_BIND, key, function, NULL);
}

/* Reads each character libedit edits with (`EL_GETCFN`): 1 and the character, 0 at the end
   of input, -1 on an error (errno). */
typedef int (*cachesh_read_function)(EditLine *, wchar_t *);

static inline int cachesh_el_set_read_function(EditLine *el, cachesh_read_function f) {
    return el_set(el, EL_GETCFN, f);
}

/* Draws the prompt and line again from the cursor's row and column 0, as if nothing were on the
   screen (`EL_REFRESH`). */
static inline int cachesh_el_refresh(EditLine *el) {
    return el_set(el, EL_REFRESH);
}

/* Editing on (1) or off (0). Off, libedit leaves the terminal's settings alone as a read ends. */
static inline int cachesh_el_set_editmode(EditLine *el, int on) {
    return el_set(el, EL_EDITMODE, on);
}

/* Puts the terminal in libedit's editing mode (1) or back in the mode it found (0). */
static inline int cachesh_el_prepare_terminal(EditLine *el, int editing) {
    return el_set(el, EL_PREP_TERM, editing);
}

/* `setty -d MODE`: fix a tty mode while editing (e.g. "-isig"). */
static inline int cachesh_el_setty_edit(EditLine *el, const char *mode) {
    return el_set(el, EL_SETTY, "-d", mode, NULL);
}

/* `settc CAP VALUE`: set a terminal capability ("" removes it). */
static inline int cachesh_el_settc(EditLine *el, const char *capability, const char *value) {
    return el_set(el, EL_SETTC, capability, value, NULL);
}

/* The terminal's width as the editor knows it (80 when unknown). */
static inline int cachesh_el_columns(EditLine *el) {
    int columns = 0;
    if (el_get(el, EL_GETTC, "co", &columns, NULL) != 0 || columns <= 0) return 80;
    return columns;
}

static inline int cachesh_history_set_size(History *h, int size) {
    HistEvent event;
    return history(h, &event, H_SETSIZE, size);
}

static inline int cachesh_history_set_unique(History *h, int unique) {
    HistEvent event;
    return history(h, &event, H_SETUNIQUE, unique);
}

static inline int cachesh_history_load(History *h, const char *path) {
    HistEvent event;
    return history(h, &event, H_LOAD, path);
}

static inline int cachesh_history_save_fp(History *h, FILE *file) {
    HistEvent event;
    return history(h, &event, H_SAVE_FP, file);
}

static inline int cachesh_history_enter(History *h, const char *line) {
    HistEvent event;
    return history(h, &event, H_ENTER, line);
}
#endif
