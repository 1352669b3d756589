// Command ghserve runs the fake GitHub of package githubtest on loopback:
// REST API, OAuth (with PKCE) and git over HTTP, with one account whose
// repositories are ready to deploy. It is for browser journeys,
// screenshots and trying GitHub connect on a laptop without an OAuth app.
//
//	ghserve [-user maya-chen]
//
// It prints "listening on http://ADDR" once ready, then the environment to
// give `gantry serve`, and serves until killed. Whoever opens the authorize
// page consents as -user at once. Projects created from its repositories
// get webhooks; POST /_githubtest/push and /_githubtest/pull_request
// commit and deliver events to them (see githubtest.EnableControl).
// Nothing here is secure: it is a test double (fixed client secret, tokens
// in memory, unauthenticated control endpoints).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gantryhq/gantry/internal/githost/githubtest"
	"github.com/gantryhq/gantry/internal/processtb"
)

func main() {
	login := flag.String("user", "maya-chen", "login of the fake account that consents")
	flag.Parse()
	tb := processtb.New("ghserve")
	s := githubtest.NewServer(tb)
	s.AddUser(*login)
	now := time.Now().UTC().Truncate(time.Second)
	for i, r := range []struct {
		name, desc string
		private    bool
		files      map[string]string
	}{
		{"portfolio", "My personal portfolio: projects, CV and contact page", false,
			map[string]string{"index.html": "<!doctype html><title>Portfolio</title><h1>Maya Chen</h1>"}},
		{"thesis-dashboard", "Charts for my thesis experiments (private until submission)", true,
			map[string]string{"index.html": "<!doctype html><title>Thesis</title><h1>Thesis dashboard</h1>"}},
		{"recipe-finder", "Search recipes by what is left in the fridge", false,
			map[string]string{"index.html": "<!doctype html><title>Recipes</title><h1>Recipe finder</h1>"}},
		{"club-website", "", true,
			map[string]string{"index.html": "<!doctype html><title>Club</title><h1>Chess club</h1>"}},
		{"advent-of-code", "Solutions, one folder per day", false, nil},
	} {
		s.AddRepo(tb, githubtest.Repo{Owner: *login, Name: r.name, Description: r.desc, Private: r.private,
			UpdatedAt: now.Add(-time.Duration(i*37) * time.Hour)}, r.files)
	}
	s.EnableControl(tb)
	s.SetPingOnCreate(true)
	fmt.Printf("listening on %s\n", s.URL)
	fmt.Printf("GANTRY_GITHUB_CLIENT_ID=%s GANTRY_GITHUB_CLIENT_SECRET=%s GANTRY_GITHUB_API_URL=%s GANTRY_GITHUB_WEB_URL=%s\n",
		s.ClientID, s.ClientSecret, s.APIURL(), s.URL)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
	tb.Close()
}
