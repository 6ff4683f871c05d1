/**
 * Where the compiled binary keeps its initialised embedded database: the data directory PGlite's
 * initdb makes, as a zstd-compressed tar (40 MB to 1.7 MB) made by `bun run build`
 * (scripts/build.ts replaces this module with one that imports it as an embedded file). A fresh
 * data directory is unpacked from it instead of running initdb at start, which took ~10-17 s and
 * raised the process to about 1.1 GB (initdb runs a second PostgreSQL instance and copies its
 * whole WebAssembly memory). From source there is none, and PGlite runs initdb as before.
 */
export const PGDATA_TEMPLATE: string | undefined = undefined
