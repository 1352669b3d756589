package gantry_test

import (
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
)

func TestRegistrationValidate(t *testing.T) {
	t.Parallel()
	ok := gantry.Registration{Username: "ada_L-1", Email: "ada@example.com", Password: "secret", FullName: "Ada"}
	for _, tc := range []struct {
		name string
		edit func(r *gantry.Registration)
		want string
	}{
		{"valid", func(r *gantry.Registration) {}, ""},
		{"all empty", func(r *gantry.Registration) { *r = gantry.Registration{} }, "Username is required"},
		{"username short", func(r *gantry.Registration) { r.Username = "ab" }, "Username must be at least 3 characters long"},
		{"username 30", func(r *gantry.Registration) { r.Username = strings.Repeat("a", 30) }, ""},
		{"username 31", func(r *gantry.Registration) { r.Username = strings.Repeat("a", 31) }, "Username cannot exceed 30 characters"},
		{"username chars", func(r *gantry.Registration) { r.Username = "a+b" }, "Username can only contain letters, numbers, underscores, and hyphens"},
		{"email empty", func(r *gantry.Registration) { r.Email = "" }, "Email is required"},
		{"email shape", func(r *gantry.Registration) { r.Email = "a@b" }, "Please enter a valid email address"},
		{"email plus", func(r *gantry.Registration) { r.Email = "a+tag@mail.example.co.uk" }, ""},
		{"email too long", func(r *gantry.Registration) { r.Email = strings.Repeat("a", 250) + "@b.co" }, "Please enter a valid email address"},
		{"password empty", func(r *gantry.Registration) { r.Password = "" }, "Password is required"},
		{"password 5", func(r *gantry.Registration) { r.Password = "12345" }, "Password must be at least 6 characters long"},
		{"password 6 runes", func(r *gantry.Registration) { r.Password = "éééééé" }, ""},
		{"full name empty", func(r *gantry.Registration) { r.FullName = "" }, "Full name is required"},
		{"full name 100 runes", func(r *gantry.Registration) { r.FullName = strings.Repeat("ü", 100) }, ""},
		{"full name 101", func(r *gantry.Registration) { r.FullName = strings.Repeat("a", 101) }, "Full name cannot exceed 100 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.edit(&r)
			r.Normalize()
			err := r.Validate()
			if got := gantry.ErrorMessage(err); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if err != nil && gantry.ErrorCode(err) != gantry.EINVALID {
				t.Errorf("got code %q, want EINVALID", gantry.ErrorCode(err))
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	r := gantry.Registration{Username: " Ada ", Email: " ADA@Example.COM ", Password: " pw ", FullName: " Ada L "}
	r.Normalize()
	if r.Username != "Ada" || r.Email != "ada@example.com" || r.Password != " pw " || r.FullName != "Ada L" {
		t.Errorf("got %+v", r)
	}
	s := func(v string) *string { return &v }
	u := gantry.UserUpdate{Email: s(" X@Y.Z "), Avatar: s(" https://a.b/c.png ")}
	u.Normalize()
	if *u.Email != "x@y.z" || *u.Avatar != "https://a.b/c.png" || u.FullName != nil {
		t.Errorf("got %+v", u)
	}
}

func TestValidateAvatar(t *testing.T) {
	t.Parallel()
	for in, valid := range map[string]bool{
		"":                          true,
		"https://example.com/a.png": true,
		"http://example.com/a.png":  false,
		"javascript:alert(1)":       false,
		"data:image/png;base64,AA":  false,
		"https://":                  false,
		"/relative.png":             false,
		"https://example.com/" + strings.Repeat("a", 2048): false,
	} {
		if err := gantry.ValidateAvatar(in); (err == nil) != valid {
			t.Errorf("ValidateAvatar(%.40q) = %v, want valid %v", in, err, valid)
		}
	}
}
