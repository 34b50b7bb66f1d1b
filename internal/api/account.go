package api

import "net/http"

// Address is the earlier release's answer of the address operation.
type Address struct {
	NativeAddress string `json:"nativeAddress"`
	RelayAddress  string `json:"relayAddress"`
}

// Addresses is the later release's answer, with duplicate fields.
type Addresses struct {
	NativeAddress string `json:"nativeAddress"`
	Native        string `json:"native"`
	RelayAddress  string `json:"relayAddress"`
	Relay         string `json:"relay"`
}

func (s *Server) getAddress(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, Address{
		NativeAddress: s.cfg.Self.Address().Hex(),
		RelayAddress:  s.cfg.Self.PeerID().String(),
	})
}

func (s *Server) getAddresses(w http.ResponseWriter, r *http.Request) {
	native, relay := s.cfg.Self.Address().Hex(), s.cfg.Self.PeerID().String()
	writeJSON(w, http.StatusOK, Addresses{NativeAddress: native, Native: native, RelayAddress: relay, Relay: relay})
}
