declare module '*.wasm' { const path: string; export default path }
declare module '*.data' { const path: string; export default path }
declare module '*.gz' { const path: string; export default path }
declare module '*.bcmap' { const path: string; export default path }
declare module '*.pfb' { const path: string; export default path }
declare module '*.ttf' { const path: string; export default path }
declare module '*.node' { const path: string; export default path }
