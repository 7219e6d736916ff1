// A model of a get hit's memory reads at 1 M entries (Benchmarks/README.md, "get at 1 M, measured
// again"): random lookups of 1 M keys of 16 bytes in three layouts,
//   (a) an index of 8-byte buckets naming the slot of a 96-byte entry that holds the key (the
//       engine's key index and entries);
//   (b) the keys in bucket order with the 96-byte entries in the same order (a dictionary whose
//       values are the entries);
//   (c) a dictionary of keys and 8-byte values (CoreBenchmarks' baseline);
// each lookup reading 8 bytes of its entry or value, the tables on huge pages where the system
// gives them. Lookups overlap as the processor allows; with -DDEP=1 each key's index depends on
// the last lookup's result, so they run one at a time.
//
//   gcc -O2 Benchmarks/layout-model.c -o /tmp/layout-model && /tmp/layout-model
//   gcc -O2 -DDEP=1 Benchmarks/layout-model.c -o /tmp/layout-model && /tmp/layout-model
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#ifndef DEP
#define DEP 0
#endif
typedef struct { uint64_t k0, k1; uint64_t rest[10]; } Entry; // 96 bytes
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static uint64_t h64(uint64_t a, uint64_t b){ uint64_t x=a*0x9e3779b97f4a7c15ULL ^ b; x^=x>>29; x*=0xbf58476d1ce4e5b9ULL; x^=x>>32; return x;}
static void* huge(size_t n){ void*p=aligned_alloc(2<<20,(n+(2<<20)-1)&~((size_t)(2<<20)-1)); madvise(p,n,MADV_HUGEPAGE); memset(p,0,n); return p;}
int main(){
  size_t n=1000000, nb=1<<21; // buckets
  uint64_t (*keys)[2]=malloc(n*16); for(size_t i=0;i<n;i++){keys[i][0]=0x3a6e0000+i; keys[i][1]=i*7;}
  uint32_t *order=malloc(n*4); srand(1); for(size_t i=0;i<n;i++) order[i]=rand()%n;
  // (a)
  uint64_t *buckets=huge(nb*8); Entry *entries=huge(n*sizeof(Entry));
  for(size_t i=0;i<n;i++){ entries[i].k0=keys[i][0]; entries[i].k1=keys[i][1]; entries[i].rest[5]=i;
    uint64_t h=h64(keys[i][0],keys[i][1]); size_t b=h&(nb-1); while(buckets[b]) b=(b+1)&(nb-1); buckets[b]=((h>>32)<<32)|(i+1);}
  // (b)
  uint64_t (*bkeys)[2]=huge(nb*16); Entry *bentries=huge(nb*sizeof(Entry)); uint8_t *used=calloc(nb,1);
  for(size_t i=0;i<n;i++){ uint64_t h=h64(keys[i][0],keys[i][1]); size_t b=h&(nb-1); while(used[b]) b=(b+1)&(nb-1); used[b]=1; bkeys[b][0]=keys[i][0]; bkeys[b][1]=keys[i][1]; bentries[b].rest[5]=i;}
  // (c)
  uint64_t *vals=malloc(nb*8); uint64_t (*ckeys)[2]=malloc(nb*16); uint8_t *cused=calloc(nb,1);
  for(size_t i=0;i<n;i++){ uint64_t h=h64(keys[i][0],keys[i][1]); size_t b=h&(nb-1); while(cused[b]) b=(b+1)&(nb-1); cused[b]=1; ckeys[b][0]=keys[i][0]; ckeys[b][1]=keys[i][1]; vals[b]=i;}
  for(int round=0;round<3;round++){
  uint64_t sum=0; double s=now();
  for(size_t j=0;j<n;j++){ uint64_t*k=keys[order[j]^(uint32_t)(sum>>63)*DEP]; uint64_t h=h64(k[0],k[1]); size_t b=h&(nb-1);
    for(;;){ uint64_t e=buckets[b]; if((e>>32)==(h>>32)){ Entry*x=&entries[(e&0xffffffff)-1]; if(x->k0==k[0]&&x->k1==k[1]){sum+=x->rest[5];break;} } b=(b+1)&(nb-1);} }
  double ta=(now()-s)/n; s=now();
  for(size_t j=0;j<n;j++){ uint64_t*k=keys[order[j]^(uint32_t)(sum>>63)*DEP]; uint64_t h=h64(k[0],k[1]); size_t b=h&(nb-1);
    for(;;){ if(bkeys[b][0]==k[0]&&bkeys[b][1]==k[1]){sum+=bentries[b].rest[5];break;} b=(b+1)&(nb-1);} }
  double tb=(now()-s)/n; s=now();
  for(size_t j=0;j<n;j++){ uint64_t*k=keys[order[j]^(uint32_t)(sum>>63)*DEP]; uint64_t h=h64(k[0],k[1]); size_t b=h&(nb-1);
    for(;;){ if(cused[b]&&ckeys[b][0]==k[0]&&ckeys[b][1]==k[1]){sum+=vals[b];break;} b=(b+1)&(nb-1);} }
  double tc=(now()-s)/n;
  printf("(a) index -> entry %.0f ns  (b) entries in bucket order %.0f ns  (c) dictionary %.0f ns  a/c %.2fx b/c %.2fx  [%lu]\n",ta,tb,tc,ta/tc,tb/tc,sum&1);
  }
}
