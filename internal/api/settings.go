package api

import (
	"encoding/json"
	"net/http"
)

// SettingValue is the body of PUT /settings/{setting}, the original interface's form.
type SettingValue struct {
	SettingValue json.RawMessage `json:"settingValue"`
}

func (s *Server) getSettings(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.cfg.Settings.Get().JSON())
}

// putSettings changes the settings the body names, all or none, and answers all of them.
func (s *Server) putSettings(w http.ResponseWriter, r *http.Request) {
	var body map[string]json.RawMessage
	if !decodeBody(w, r, &body) {
		return
	}
	v, err := s.cfg.Settings.Update(body)
	if err != nil {
		s.fail(w, "update settings", err)
		return
	}
	writeJSON(w, http.StatusOK, v.JSON())
}

// putSetting changes one setting (204), as the original interface's PUT /settings/{setting}.
func (s *Server) putSetting(w http.ResponseWriter, r *http.Request) {
	var body SettingValue
	if !decodeBody(w, r, &body) {
		return
	}
	if len(body.SettingValue) == 0 {
		writeError(w, http.StatusBadRequest, CodeInvalidSettingValue, "settingValue is required")
		return
	}
	if _, err := s.cfg.Settings.Update(map[string]json.RawMessage{r.PathValue("setting"): body.SettingValue}); err != nil {
		s.fail(w, "update setting", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
