package api

import (
	"net/http"

	"github.com/gantryhq/gantry"
)

// PATCH /api/notifications/read-all and PATCH /api/notifications/{id}/read
// have different numbers of segments, so neither pattern can match the
// other's requests (TestNotificationRoutes checks it).
func (s *Server) notificationRoutes() {
	h := accountAPI{s}
	s.mux.HandleFunc("GET /api/notifications", s.requireUser(h.handleListNotifications))
	s.mux.HandleFunc("PATCH /api/notifications/read-all", s.requireUser(h.handleReadAllNotifications))
	s.mux.HandleFunc("PATCH /api/notifications/{id}/read", s.requireUser(h.handleReadNotification))
	s.mux.HandleFunc("DELETE /api/notifications/{id}", s.requireUser(h.handleDeleteNotification))
	s.mux.HandleFunc("DELETE /api/notifications", s.requireUser(h.handleClearNotifications))
}

// handleListNotifications answers the signed-in user's notifications,
// newest first: {notifications, unreadCount, total}. Query: limit (1–200,
// default 50) and unread=true for unread ones only; the counts are always
// of all of them.
func (s accountAPI) handleListNotifications(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	f := gantry.NotificationFilter{Limit: gantry.DefaultNotificationLimit}
	q := r.URL.Query()
	if n, set, err := queryNumber(q, "limit", 1, gantry.MaxNotificationLimit); err != nil {
		s.writeError(w, r, err)
		return
	} else if set {
		f.Limit = n
	}
	switch q.Get("unread") {
	case "", "false":
	case "true":
		f.UnreadOnly = true
	default:
		s.writeError(w, r, gantry.Errorf(gantry.EINVALID, "unread must be true or false"))
		return
	}
	list, err := s.Notifications.ListNotifications(r.Context(), u.ID, f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// handleReadNotification marks one notification read: {notification,
// unreadCount}. Another user's notification is 404.
func (s accountAPI) handleReadNotification(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	n, unread, err := s.Notifications.MarkNotificationRead(r.Context(), u.ID, r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"notification": n, "unreadCount": unread})
}

// handleReadAllNotifications marks every notification read: {updated,
// unreadCount: 0}, updated being how many were unread.
func (s accountAPI) handleReadAllNotifications(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	n, err := s.Notifications.MarkAllNotificationsRead(r.Context(), u.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"updated": n, "unreadCount": 0})
}

// handleDeleteNotification deletes one notification: {deleted: id,
// unreadCount}. Another user's notification is 404.
func (s accountAPI) handleDeleteNotification(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	id := r.PathValue("id")
	unread, err := s.Notifications.DeleteNotification(r.Context(), u.ID, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": id, "unreadCount": unread})
}

// handleClearNotifications deletes every notification of the user:
// {deleted, unreadCount: 0}, deleted being how many there were.
func (s accountAPI) handleClearNotifications(w http.ResponseWriter, r *http.Request, u *gantry.User) {
	n, err := s.Notifications.ClearNotifications(r.Context(), u.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": n, "unreadCount": 0})
}
