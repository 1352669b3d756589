export const dynamic = 'force-dynamic'
export default function About() {
  return <main><h1>About</h1><p>Rendered at {new Date().toISOString()}</p></main>
}
