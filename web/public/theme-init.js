// Applies the stored theme (or the system preference) before React renders,
// so the page never flashes the wrong theme. Kept as a file for the CSP.
(function () {
  try {
    var t = localStorage.getItem('theme')
    if (t !== 'dark' && t !== 'light') t = matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'
    if (t === 'dark') document.documentElement.classList.add('dark')
  } catch (e) {}
})()
