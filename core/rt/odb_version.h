/* odb_version.h - what this build is (core/rt/odb_version.c.in, filled in by
   the build). */
#ifndef ODB_VERSION_H
#define ODB_VERSION_H

/* Version of the library, e.g. "0.1.0". */
const char *odb_version(void);
/* Git revision the library was built from ("unknown" outside a checkout). */
const char *odb_revision(void);
/* Compiler id and version the library was built with. */
const char *odb_compiler(void);

#endif
