import http from 'node:http'
http.createServer((q, s) => s.end('hi')).listen(process.env.PORT)
