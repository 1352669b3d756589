package githost

import (
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/google/go-cmp/cmp"
)

func TestParseRepoURL(t *testing.T) {
	t.Parallel()
	gh := func(branch string) *RepoRef {
		return &RepoRef{Scheme: "https", Host: "github.com", Owner: "alice", Name: "site", FullName: "alice/site",
			CloneURL: "https://github.com/alice/site.git", WebURL: "https://github.com/alice/site", Branch: branch}
	}
	tests := []struct {
		name string
		in   string
		want *RepoRef
	}{
		{"plain", "https://github.com/alice/site", gh("")},
		{"dot git", "https://github.com/alice/site.git", gh("")},
		{"trailing slash", "https://github.com/alice/site/", gh("")},
		{"dot git and slash", "https://github.com/alice/site.git/", gh("")},
		{"no scheme", "github.com/alice/site", gh("")},
		{"www", "https://www.github.com/alice/site", gh("")},
		{"spaces around", "  https://github.com/alice/site \n", gh("")},
		{"uppercase scheme and host", "HTTPS://GitHub.COM/alice/site", gh("")},
		{"query and fragment dropped", "https://github.com/alice/site?tab=readme#install", gh("")},
		{"tree branch", "https://github.com/alice/site/tree/dev", gh("dev")},
		{"tree branch with slash", "https://github.com/alice/site/tree/feature/login", gh("feature/login")},
		{"blob", "https://github.com/alice/site/blob/dev/README.md", gh("dev")},
		{"issues page", "https://github.com/alice/site/issues/3", gh("")},
		{"http kept", "http://git.example.org/alice/site.git", &RepoRef{Scheme: "http", Host: "git.example.org",
			Owner: "alice", Name: "site", FullName: "alice/site",
			CloneURL: "http://git.example.org/alice/site.git", WebURL: "http://git.example.org/alice/site"}},
		{"port", "http://127.0.0.1:8080/alice/site.git", &RepoRef{Scheme: "http", Host: "127.0.0.1:8080",
			Owner: "alice", Name: "site", FullName: "alice/site",
			CloneURL: "http://127.0.0.1:8080/alice/site.git", WebURL: "http://127.0.0.1:8080/alice/site"}},
		{"port without scheme", "git.example.org:3000/alice/site", &RepoRef{Scheme: "https", Host: "git.example.org:3000",
			Owner: "alice", Name: "site", FullName: "alice/site",
			CloneURL: "https://git.example.org:3000/alice/site", WebURL: "https://git.example.org:3000/alice/site"}},
		{"gitlab subgroup and -/tree", "https://gitlab.com/group/sub/app/-/tree/release-1", &RepoRef{Scheme: "https",
			Host: "gitlab.com", Owner: "group/sub", Name: "app", FullName: "group/sub/app",
			CloneURL: "https://gitlab.com/group/sub/app.git", WebURL: "https://gitlab.com/group/sub/app", Branch: "release-1"}},
		{"gitlab -/blob", "https://gitlab.com/group/app/-/blob/main/x.js", &RepoRef{Scheme: "https",
			Host: "gitlab.com", Owner: "group", Name: "app", FullName: "group/app",
			CloneURL: "https://gitlab.com/group/app.git", WebURL: "https://gitlab.com/group/app", Branch: "main"}},
		{"gitea src/branch", "https://codeberg.org/bob/blog/src/branch/pages", &RepoRef{Scheme: "https",
			Host: "codeberg.org", Owner: "bob", Name: "blog", FullName: "bob/blog",
			CloneURL: "https://codeberg.org/bob/blog.git", WebURL: "https://codeberg.org/bob/blog", Branch: "pages"}},
		{"unknown host keeps path without .git", "https://git.zx2c4.com/wireguard-tools", &RepoRef{Scheme: "https",
			Host: "git.zx2c4.com", Name: "wireguard-tools", FullName: "wireguard-tools",
			CloneURL: "https://git.zx2c4.com/wireguard-tools", WebURL: "https://git.zx2c4.com/wireguard-tools"}},
		{"ipv6 literal", "http://[::1]:9000/a/b.git", &RepoRef{Scheme: "http", Host: "[::1]:9000",
			Owner: "a", Name: "b", FullName: "a/b", CloneURL: "http://[::1]:9000/a/b.git", WebURL: "http://[::1]:9000/a/b"}},
		{"tilde user", "https://git.campus.edu/~alice/site.git", &RepoRef{Scheme: "https", Host: "git.campus.edu",
			Owner: "~alice", Name: "site", FullName: "~alice/site",
			CloneURL: "https://git.campus.edu/~alice/site.git", WebURL: "https://git.campus.edu/~alice/site"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseRepoURL(tc.in)
			if err != nil {
				t.Fatalf("ParseRepoURL(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseRepoURL(%q) mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestParseRepoURLRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, msg string
	}{
		{"", "Please enter a repository URL"},
		{"   ", "Please enter a repository URL"},
		{"file:///etc/passwd", msgOnlyHTTP},
		{"file:/srv/git/repo.git", msgOnlyHTTP},
		{"FILE:///srv/git/repo.git", msgOnlyHTTP},
		{"ssh://git@github.com/alice/site.git", msgOnlyHTTP},
		{"git@github.com:alice/site.git", msgOnlyHTTP},
		{"alice@host:site.git", msgOnlyHTTP},
		{"git://github.com/alice/site.git", msgOnlyHTTP},
		{"ftp://example.org/alice/site.git", msgOnlyHTTP},
		{"ext::sh -c touch% /tmp/pwned", msgOnlyHTTP},
		{"ext::sh", msgOnlyHTTP},
		{"fd::17", msgOnlyHTTP},
		{"/srv/git/repo.git", msgOnlyHTTP},
		{"./repo", msgOnlyHTTP},
		{"../repo", msgOnlyHTTP},
		{"~/repo", msgOnlyHTTP},
		{"C:/repos/site", msgOnlyHTTP},
		{"https://user:pass@github.com/alice/site", msgCredentials},
		{"https://token@github.com/alice/site", msgCredentials},
		{"https://:x@github.com/alice/site", msgCredentials},
		{"https://github.com", msgNotRepoURL},
		{"https://github.com/alice", msgNotRepoURL},
		{"https://github.com/alice/../bob", msgNotRepoURL},
		{"https://example.org/a/%2e%2e/b", msgNotRepoURL},
		{"https://example.org/a/b%00c", msgNotRepoURL},
		{"https://example.org/a/-upload-pack=x", msgNotRepoURL},
		{"https://exa mple.org/a/b", msgNotRepoURL},
		{"https://example.org/a/b c", msgNotRepoURL},
		{`https://example.org\a\b`, msgNotRepoURL},
		{"https://[fe80::1%25eth0]/a/b", msgNotRepoURL},
		{"https:alice/site", msgOnlyHTTP},
		{"https://example.org:99999/a/b", "Invalid port in repository URL"},
		{"https://github.com/alice/site/tree/..", msgInvalidBranch},
		{"https://github.com/alice/site/tree/-x", msgInvalidBranch},
		{"https://github.com/alice/site/tree/a..b", msgInvalidBranch},
		{"https://github.com/alice/site/tree/a:b", msgInvalidBranch},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseRepoURL(tc.in)
			if err == nil {
				t.Fatalf("ParseRepoURL(%q) = %+v, want error %q", tc.in, got, tc.msg)
			}
			if code := gantry.ErrorCode(err); code != gantry.EINVALID {
				t.Errorf("code = %q, want %q", code, gantry.EINVALID)
			}
			if msg := gantry.ErrorMessage(err); msg != tc.msg {
				t.Errorf("message = %q, want %q", msg, tc.msg)
			}
		})
	}
}
