package api

import (
	"net/http"

	"github.com/gantryhq/gantry"
)

func (s *Server) domainRoutes() {
	h := projectAPI{s}
	s.mux.HandleFunc("GET /api/projects/{id}/domains", s.requireUser(h.handleListDomains))
	s.mux.HandleFunc("POST /api/projects/{id}/domains", s.requireUser(h.handleAddDomain))
	s.mux.HandleFunc("PUT /api/projects/{id}/domains/{domainId}", s.requireUser(h.handleUpdateDomain))
	s.mux.HandleFunc("DELETE /api/projects/{id}/domains/{domainId}", s.requireUser(h.handleRemoveDomain))
	s.mux.HandleFunc("POST /api/projects/{id}/domains/{domainId}/primary", s.requireUser(h.handleDomainPrimary))
	s.mux.HandleFunc("POST /api/projects/{id}/domains/{domainId}/verify", s.requireUser(h.handleVerifyDomain))
}

type domainAnswer struct {
	Domain *gantry.Domain `json:"domain"`
}

// domainsOff answers 503 when no domain service is configured.
func (s projectAPI) domainsOff(w http.ResponseWriter, r *http.Request) bool {
	if s.Domains == nil {
		s.writeError(w, r, gantry.Errorf(gantry.EUNAVAILABLE, "Custom domains are not available on this platform"))
		return true
	}
	return false
}

// handleListDomains answers the project's custom domains, oldest first,
// each with its records: {domains}.
func (s projectAPI) handleListDomains(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if s.domainsOff(w, r) {
		return
	}
	ds, err := s.Domains.Domains(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"domains": ds})
}

// handleAddDomain adds a custom domain: {name} → 201 {domain} with the
// DNS records to create.
func (s projectAPI) handleAddDomain(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if s.domainsOff(w, r) {
		return
	}
	var body struct {
		Name string `json:"name"`
	}
	if err := decode(w, r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	d, err := s.Domains.Add(r.Context(), u, r.PathValue("id"), body.Name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, domainAnswer{Domain: d})
}

// handleUpdateDomain sets a domain's apex ↔ www redirect: {redirect} →
// {domain}.
func (s projectAPI) handleUpdateDomain(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if s.domainsOff(w, r) {
		return
	}
	var body struct {
		Redirect string `json:"redirect"`
	}
	if err := decode(w, r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	d, err := s.Domains.SetRedirect(r.Context(), u.ID, r.PathValue("id"), r.PathValue("domainId"), body.Redirect)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, domainAnswer{Domain: d})
}

// handleRemoveDomain removes a custom domain, which stops being served at
// once: {deleted: true}.
func (s projectAPI) handleRemoveDomain(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if s.domainsOff(w, r) {
		return
	}
	if err := s.Domains.Remove(r.Context(), u.ID, r.PathValue("id"), r.PathValue("domainId")); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"deleted": true})
}

// handleDomainPrimary makes a domain the project's primary one: {domain}.
func (s projectAPI) handleDomainPrimary(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if s.domainsOff(w, r) {
		return
	}
	d, err := s.Domains.SetPrimary(r.Context(), u.ID, r.PathValue("id"), r.PathValue("domainId"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, domainAnswer{Domain: d})
}

// handleVerifyDomain checks a domain's DNS records now: {domain} with its
// new status and, when something is missing, what to fix.
func (s projectAPI) handleVerifyDomain(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	if s.domainsOff(w, r) {
		return
	}
	d, err := s.Domains.Verify(r.Context(), u.ID, r.PathValue("id"), r.PathValue("domainId"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, domainAnswer{Domain: d})
}
