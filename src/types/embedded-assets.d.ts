// Files imported `with { type: 'file' }` resolve to a path (embedded into the compiled binary).
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const path: string
  export default path
}

// protocol definitions embedded as text (`import x from './sync.proto' with { type: 'text' }`)
declare module '*.proto' {
  const text: string
  export default text
}
