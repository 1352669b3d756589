// Command gantry is the whole platform in one binary.
package main

import (
	"fmt"
	"os"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "version" {
		fmt.Println("gantry", version)
		return
	}
	fmt.Fprintln(os.Stderr, "usage: gantry serve | version")
	os.Exit(2)
}
