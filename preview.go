package gantry

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
)

// MaxLivePreviews is how many previews of one project stay live: going
// live, a preview stops the project's older ones beyond this number.
const MaxLivePreviews = 5

// PreviewSeparator joins a project's subdomain and a preview's name in the
// preview's host label. Project subdomains never contain it
// (SubdomainBase turns every run of other characters into one "-"), so a
// preview can never take a project's subdomain.
const PreviewSeparator = "--"

// DNSLabelMaxLen is the most characters a DNS label may have.
const DNSLabelMaxLen = 63

var slugRuns = regexp.MustCompile(`[^a-z0-9]+`)

// BranchSlug is branch in lower case with every run of characters other
// than a-z and 0-9 turned into one "-", trimmed of "-".
func BranchSlug(branch string) string {
	return strings.Trim(slugRuns.ReplaceAllString(strings.ToLower(branch), "-"), "-")
}

// previewHashLen is how many hex digits of a preview key's hash a label
// carries when it needs one.
const previewHashLen = 8

var prName = regexp.MustCompile(`^pr-[0-9]+$`)

// PreviewLabel is the host label of a preview of the project projectID
// (subdomain sub): sub--pr-<n> for pull request n (> 0), else
// sub--<branch> when the branch name is already its own slug (lower-case
// a-z, 0-9 and single inner hyphens, and not of the form pr-<n>), else
// sub--<slug>--<hash>, with hash the first 8 hex digits of the SHA-256 of
// the project's id and the branch's exact name. Labels are injective per
// (project, branch or pull request):
//
//   - sub never holds "--" (SubdomainBase), so a label up to 63 characters
//     names its project by the text before the first "--";
//   - a slug never holds "--", so a hashed name never equals a plain one,
//     and branch "pr-1" (hashed) never takes pull request #1's label;
//   - branches of one slug ("Feature/UPPER_case", "feature-upper-case")
//     differ by hash, and so do names that lose characters in the slug
//     ("ünïcode-branch", "n-code-branch").
//
// A label longer than 63 characters keeps the start of sub and of the name
// and ends with "--" and the hash, which then includes the project's id, a
// token of that project: two projects whose long subdomains share a prefix
// still get labels of their own (and the store refuses a label another
// project holds: store.GoLive).
func PreviewLabel(projectID, sub, branch string, pullRequest int) string {
	name := BranchSlug(branch)
	key := "branch\x00" + branch
	hashed := name != branch || prName.MatchString(name)
	if pullRequest > 0 {
		name, key, hashed = "pr-"+strconv.Itoa(pullRequest), "pr\x00"+strconv.Itoa(pullRequest), false
	}
	if name == "" {
		name, hashed = "branch", true
	}
	sum := sha256.Sum256([]byte(projectID + "\x00" + key))
	suffix := PreviewSeparator + hex.EncodeToString(sum[:])[:previewHashLen]
	label := sub + PreviewSeparator + name
	if hashed {
		label += suffix
	}
	if len(label) <= DNSLabelMaxLen {
		return label
	}
	// The subdomain keeps room for the separator and one character of the
	// name, so the label always holds "--" after it and never reads as a
	// project's.
	head := strings.TrimRight(sub[:min(len(sub), DNSLabelMaxLen-len(suffix)-len(PreviewSeparator)-1)], "-")
	cut := strings.TrimRight((head + PreviewSeparator + name)[:DNSLabelMaxLen-len(suffix)], "-")
	if len(cut) <= len(head)+1 {
		cut = head // no room for the name: head--<hash>
	}
	return cut + suffix
}

var commitSHA = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// ValidCommitSHA reports whether s is a full commit hash: 40 (SHA-1) or
// 64 (SHA-256) lower-case hex digits.
func ValidCommitSHA(s string) bool { return commitSHA.MatchString(s) }

// ShortSHA is the first 7 characters of a commit hash.
func ShortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
