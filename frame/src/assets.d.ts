// Stylesheets imported for their side effect; Bun.build emits them as the frame's CSS file.
declare module '*.css' {}
