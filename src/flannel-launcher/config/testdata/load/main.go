// load runs config.Load on one file, as the launcher's commands do, and prints each problem on a line of its
// own; it exits 2 when the config is invalid. Tests start it as another user than root.
//
//	load FILE
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/config"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: load FILE")
		os.Exit(2)
	}
	_, err := config.Load(os.Args[1])
	var invalid *config.InvalidError
	switch {
	case errors.As(err, &invalid):
		for _, problem := range invalid.Problems {
			fmt.Println(problem)
		}
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
