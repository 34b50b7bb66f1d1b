package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// callTimeout bounds one REST call to a node (opening a channel sends two
// transactions and waits for the node's indexer).
const callTimeout = 30 * time.Second

// nodeClient calls one node's REST API with the cluster's token.
type nodeClient struct {
	base  string // e.g. http://127.0.0.1:13301
	token string
	http  *http.Client
}

// statusError is a REST answer other than the one expected.
type statusError struct {
	method, path string
	status       int
	body         string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.method, e.path, e.status, e.body)
}

// call sends a request to /api/v2+path with body (JSON-encoded when not
// nil), expects status want and decodes the answer into out (when not nil).
func (c nodeClient) call(ctx context.Context, method, path string, body any, want int, out any) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/api/v2"+path, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("x-auth-token", c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return &statusError{method, path, resp.StatusCode, string(bytes.TrimSpace(raw))}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}

// info is the part of GET /node/info the cluster waits on.
type info struct {
	ChannelsIndexed int `json:"channelsIndexed"`
	PeersAnnounced  int `json:"peersAnnounced"`
}

func (c nodeClient) info(ctx context.Context) (info, error) {
	var i info
	err := c.call(ctx, http.MethodGet, "/node/info", nil, http.StatusOK, &i)
	return i, err
}

// peers returns the peer IDs GET /node/peers lists as announced.
func (c nodeClient) peers(ctx context.Context) (map[string]bool, error) {
	var p struct {
		Announced []struct {
			PeerID string `json:"peerId"`
		} `json:"announced"`
	}
	if err := c.call(ctx, http.MethodGet, "/node/peers", nil, http.StatusOK, &p); err != nil {
		return nil, err
	}
	ids := make(map[string]bool, len(p.Announced))
	for _, a := range p.Announced {
		ids[a.PeerID] = true
	}
	return ids, nil
}

// openChannel opens a funded channel to peerID; one that is already open
// counts as done (a retried start).
func (c nodeClient) openChannel(ctx context.Context, peerID, amount string) error {
	err := c.call(ctx, http.MethodPost, "/channels", map[string]string{"peerId": peerID, "amount": amount}, http.StatusCreated, nil)
	if se, ok := err.(*statusError); ok && se.status == http.StatusConflict {
		return nil
	}
	return err
}

// openOutgoing counts the node's open outgoing channels (GET /channels).
func (c nodeClient) openOutgoing(ctx context.Context) (int, error) {
	var chs struct {
		Outgoing []struct {
			Status string `json:"status"`
		} `json:"outgoing"`
	}
	if err := c.call(ctx, http.MethodGet, "/channels", nil, http.StatusOK, &chs); err != nil {
		return 0, err
	}
	n := 0
	for _, ch := range chs.Outgoing {
		if ch.Status == "Open" {
			n++
		}
	}
	return n, nil
}

// ticketsHeld is how many acknowledged tickets the node holds or has redeemed
// (GET /tickets/statistics): a number that never goes down unless a ticket
// is lost.
func (c nodeClient) ticketsHeld(ctx context.Context) (uint64, error) {
	var st struct {
		Unredeemed uint64 `json:"unredeemed"`
		Redeemed   uint64 `json:"redeemed"`
	}
	if err := c.call(ctx, http.MethodGet, "/tickets/statistics", nil, http.StatusOK, &st); err != nil {
		return 0, err
	}
	return st.Unredeemed + st.Redeemed, nil
}
