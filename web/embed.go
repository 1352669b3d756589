// Package web embeds the built React app (web/dist) into the gantry binary.
package web

import (
	"embed"
	"io/fs"
)

// dist holds the output of `npm run build`. The all: prefix keeps files
// whose names start with '.' or '_'; .gitkeep makes `go build` work before
// the web app has been built.
//
//go:embed all:dist
var dist embed.FS

// Dist returns the built app rooted at its index.html.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // unreachable: "dist" is embedded above
	}
	return sub
}
