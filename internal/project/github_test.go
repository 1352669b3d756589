package project_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy/deploytest"
	"github.com/gantryhq/gantry/internal/project"
	"github.com/gantryhq/gantry/internal/secret"
	"github.com/gantryhq/gantry/internal/store/storetest"
)

// TestCreateFromGitHubRefuses covers the paths that never reach GitHub.
func TestCreateFromGitHubRefuses(t *testing.T) {
	t.Parallel()
	svc := deploytest.New(t, deploytest.Options{DB: storetest.MustOpenDB(t)}).Projects
	svc.Decrypt = func(string) (string, error) { return "", secret.ErrInvalid }
	ctx := context.Background()
	connected := &gantry.User{ID: "u1", GitHub: gantry.GitHubLink{Connected: true, AccessToken: "v1:x",
		Repos: []gantry.GitHubRepo{{ID: 5, Name: "a"}}}}
	for _, tc := range []struct {
		name     string
		u        *gantry.User
		id       int64
		wantCode string
		wantMsg  string
	}{
		{"not connected", &gantry.User{ID: "u1"}, 5, gantry.EINVALID, gantry.MsgConnectGitHub},
		{"no repository", connected, 0, gantry.EINVALID, "Please select a repository"},
		{"not in the account's list", connected, 6, gantry.ENOTFOUND, project.MsgGitHubRepoUnseen},
		{"token that no longer opens", connected, 5, gantry.EINVALID, gantry.MsgGitHubRevoked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.CreateFromGitHub(ctx, tc.u, project.GitHubInput{RepositoryID: project.GitHubRepoID(tc.id)})
			if gantry.ErrorCode(err) != tc.wantCode || gantry.ErrorMessage(err) != tc.wantMsg {
				t.Fatalf("got %v, want %s %q", err, tc.wantCode, tc.wantMsg)
			}
		})
	}
}

func TestGitHubRepoIDJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{`123`, 123, false}, {`"123"`, 123, false}, {`" 42 "`, 42, false}, {`null`, 0, false},
		{`"abc"`, 0, true}, {`-1`, 0, true}, {`1.5`, 0, true}, {`true`, 0, true}, {`"99999999999999999999"`, 0, true},
	} {
		var v struct {
			ID project.GitHubRepoID `json:"repositoryId"`
		}
		err := json.Unmarshal([]byte(`{"repositoryId":`+tc.in+`}`), &v)
		if (err != nil) != tc.wantErr || int64(v.ID) != tc.want {
			t.Errorf("%s: got %d, %v; want %d (error %v)", tc.in, v.ID, err, tc.want, tc.wantErr)
		}
		var te *json.UnmarshalTypeError
		if err != nil && (!errors.As(err, &te) || te.Field != "repositoryId") {
			t.Errorf("%s: got %T %v, want a type error naming the field", tc.in, err, err)
		}
	}
}
