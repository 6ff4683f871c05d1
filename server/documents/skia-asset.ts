/**
 * Where the compiled binary keeps its compressed copy of Skia (the canvas's native library). From
 * source there is none: the canvas package loads its own file. `bun run build` replaces this module
 * with one that imports the library as an embedded file (scripts/build.ts), which a source run must
 * never do: Bun refuses to import a Node-API module as anything but an addon.
 */
export const SKIA_ASSET: string | undefined = undefined
