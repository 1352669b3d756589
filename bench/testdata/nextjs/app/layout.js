export const metadata = { title: 'A student portfolio' }
export default function RootLayout({ children }) {
  return <html lang="en"><body>{children}</body></html>
}
