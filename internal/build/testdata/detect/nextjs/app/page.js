export default function Page() { return <h1>Hi</h1> }
