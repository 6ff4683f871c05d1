// Stands in for @napi-rs/canvas's own native-module requires in the compiled binary: the binary
// carries Skia compressed and points the loader at it (server/documents/native-canvas.ts).
throw new Error('Skia is loaded through NAPI_RS_NATIVE_LIBRARY_PATH in this build')
