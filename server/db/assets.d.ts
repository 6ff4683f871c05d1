declare module '*.wasm' { const path: string; export default path }
declare module '*.data' { const path: string; export default path }
declare module '*.gz' { const path: string; export default path }
declare module '*.node' { const path: string; export default path }
