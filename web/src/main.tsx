import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import './index.css'

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <div className="p-8 text-zinc-900 dark:text-zinc-100">Gantry</div>
  </StrictMode>,
)
