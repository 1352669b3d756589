import http.server
