package api

import (
	"net/url"
	"strconv"

	"github.com/gantryhq/gantry"
)

// wholeNumber reads s as a whole number from min to max, written the one
// plain way: ASCII digits, no sign, no leading zero (but "0"), so that
// "+1", "01" and " 1" are not 1. ok is false for anything else.
func wholeNumber(s string, min, max int) (n int, ok bool) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= min && n <= max
}

// queryNumber reads the optional query parameter name as a wholeNumber
// from min to max: set is false when it is absent or empty; any other
// value is 400 "<name> must be a whole number from <min> to <max>".
func queryNumber(q url.Values, name string, min, max int) (n int, set bool, err error) {
	v := q.Get(name)
	if v == "" {
		return 0, false, nil
	}
	if n, ok := wholeNumber(v, min, max); ok {
		return n, true, nil
	}
	return 0, false, gantry.Errorf(gantry.EINVALID, "%s must be a whole number from %d to %d", name, min, max)
}
