package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/secret"
)

// MsgGitHubTaken is the conflict of linking a GitHub account that another
// Gantry account holds.
const MsgGitHubTaken = "This GitHub account is already connected to another Gantry account"

// SetGitHubLink connects userID to the GitHub account link describes: it
// stores link.ID, Username, Avatar, AccessToken and Repos, marks the account
// connected (whatever link.Connected says) and returns nothing else.
//
// link.AccessToken must already be sealed (internal/secret, "v1:…"): the
// store keeps it as given in github_access_token and refuses a value that
// is not sealed, so a plaintext token is never written by mistake. A GitHub
// id held by another Gantry account is ECONFLICT MsgGitHubTaken (one GitHub
// account links to one Gantry account; the unique index
// users_github_id_key enforces it); linking the same id again, or another
// GitHub account to an already connected user, replaces the link. A missing
// user is ENOTFOUND; a zero id or an empty username is EINVALID.
func (st githubHooks) SetGitHubLink(ctx context.Context, userID string, link gantry.GitHubLink) error {
	db := st.db
	if link.ID == 0 || link.Username == "" {
		return gantry.Errorf(gantry.EINVALID, "A GitHub account id and username are required")
	}
	if link.AccessToken != "" && !secret.IsSealed(link.AccessToken) {
		return errors.New("store: refusing to store a GitHub access token that is not encrypted")
	}
	repos, err := encodeRepos(link.Repos)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	var n int
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM users WHERE github_id = ? AND id <> ?`,
		link.ID, userID).Scan(&n); err != nil {
		return fmt.Errorf("check github id: %w", err)
	} else if n > 0 {
		return gantry.Errorf(gantry.ECONFLICT, MsgGitHubTaken)
	}
	res, err := tx.exec(ctx, `UPDATE users SET github_connected = ?, github_id = ?, github_username = ?,
			github_avatar = ?, github_access_token = ?, github_repos = ?, updated_at = ?
		WHERE id = ?`,
		true, link.ID, link.Username, link.Avatar, link.AccessToken, repos, tx.now, userID)
	if err != nil {
		if _, ok := uniqueViolation(err); ok {
			return gantry.Errorf(gantry.ECONFLICT, MsgGitHubTaken)
		}
		return fmt.Errorf("set github link: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return gantry.Errorf(gantry.ENOTFOUND, "User not found")
	}
	return tx.Commit()
}

// SetGitHubRepos replaces the stored repository list of userID's connected
// account (most recently updated first, as GitHub.Repos returns it). It
// does not touch the token or the connection. A missing user is ENOTFOUND.
func (st githubHooks) SetGitHubRepos(ctx context.Context, userID string, repos []gantry.GitHubRepo) error {
	db := st.db
	enc, err := encodeRepos(repos)
	if err != nil {
		return err
	}
	return db.updateOne(ctx, `UPDATE users SET github_repos = ?, updated_at = ? WHERE id = ?`, enc, db.now(), userID)
}

// ClearGitHubLink disconnects userID's GitHub account: the sealed token,
// the GitHub id (so the account may be linked elsewhere), username, avatar
// and repository list are erased. Clearing an account that is not connected
// is not an error; a missing user is ENOTFOUND.
func (st githubHooks) ClearGitHubLink(ctx context.Context, userID string) error {
	db := st.db
	return db.updateOne(ctx, `UPDATE users SET github_connected = ?, github_id = NULL, github_username = '',
			github_avatar = '', github_access_token = '', github_repos = '[]', updated_at = ?
		WHERE id = ?`, false, db.now(), userID)
}

// encodeRepos is the JSON of github_repos, times in UTC; nil is stored as [].
func encodeRepos(repos []gantry.GitHubRepo) (string, error) {
	out := make([]gantry.GitHubRepo, len(repos))
	for i, r := range repos {
		r.UpdatedAt = r.UpdatedAt.UTC()
		out[i] = r
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encode github repos: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
