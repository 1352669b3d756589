export default function Home() {
  return <main><h1>Hello from Next.js</h1><p>A student's portfolio, rendered by next start.</p></main>
}
