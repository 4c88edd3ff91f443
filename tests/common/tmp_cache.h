/* tmp_cache.h - an empty kernel cache in a temporary directory, for tests
   that compile with NVRTC and need no device (header-only, POSIX). */
#ifndef TMP_CACHE_H
#define TMP_CACHE_H
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct tmp_cache {
  char base[64];         /* the directory XDG_CACHE_HOME points at */
  char *keep;            /* XDG_CACHE_HOME before, or NULL */
  int ok;                /* 1 once the directory exists */
} tmp_cache;

/* Points XDG_CACHE_HOME at a new empty directory (c->ok: it worked). */
static void tmp_cache_open(tmp_cache *c) {
  const char *old = getenv("XDG_CACHE_HOME");
  snprintf(c->base, sizeof c->base, "/tmp/odb_cache_XXXXXX");
  c->keep = old ? strdup(old) : NULL;
  c->ok = mkdtemp(c->base) != NULL;
  if (c->ok) setenv("XDG_CACHE_HOME", c->base, 1);
}

/* The .cubin files the cache holds; removes them when rm. */
static int tmp_cache_cubins(const tmp_cache *c, int rm) {
  char dir[128], path[512];
  struct dirent *e;
  DIR *d;
  int n = 0;
  snprintf(dir, sizeof dir, "%s/odebench/kernels", c->base);
  if (!c->ok || !(d = opendir(dir))) return 0;
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l > 6 && strcmp(e->d_name + l - 6, ".cubin") == 0) {
      ++n;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      if (rm) remove(path);
    }
  }
  closedir(d);
  return n;
}

/* Empties and removes the cache and restores XDG_CACHE_HOME. */
static void tmp_cache_close(tmp_cache *c) {
  char dir[128];
  if (c->ok) {
    tmp_cache_cubins(c, 1);
    snprintf(dir, sizeof dir, "%s/odebench/kernels", c->base);
    rmdir(dir);
    snprintf(dir, sizeof dir, "%s/odebench", c->base);
    rmdir(dir);
    rmdir(c->base);
    if (c->keep) setenv("XDG_CACHE_HOME", c->keep, 1);
    else unsetenv("XDG_CACHE_HOME");
  }
  free(c->keep);
  c->keep = NULL;
  c->ok = 0;
}

#endif
