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

// PreviewLabel is the host label of a preview of project subdomain sub:
// sub--pr-<n> for pull request n (> 0), else sub--<branch slug>. A label
// longer than 63 characters is cut and ended with "-" and the first 6 hex
// digits of the SHA-256 of the branch (of "pr-<n>" for a pull request),
// so two long branch names that share a prefix still get labels of their
// own.
func PreviewLabel(sub, branch string, pullRequest int) string {
	name := BranchSlug(branch)
	key := branch
	if pullRequest > 0 {
		name = "pr-" + strconv.Itoa(pullRequest)
		key = name
	}
	if name == "" {
		name = "branch"
	}
	label := sub + PreviewSeparator + name
	if len(label) <= DNSLabelMaxLen {
		return label
	}
	sum := sha256.Sum256([]byte(key))
	suffix := "-" + hex.EncodeToString(sum[:])[:6]
	// The subdomain keeps room for the separator and one character of the
	// name, so the label always holds "--" and never reads as a project's.
	head := strings.TrimRight(sub[:min(len(sub), DNSLabelMaxLen-len(suffix)-len(PreviewSeparator)-1)], "-")
	cut := strings.TrimRight((head + PreviewSeparator + name)[:DNSLabelMaxLen-len(suffix)], "-")
	if len(cut) <= len(head)+1 {
		cut = head + "-" // head + "-" + "-<hash>"
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
