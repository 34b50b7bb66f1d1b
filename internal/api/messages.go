package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/courier"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/peers"
)

// MessageRequest is the body of POST /messages. Recipient is a PeerId, an alias or "me", as in
// the admin send command. A request of the original interface (body and recipient, a body that
// one packet carries) is sent as one packet and answered with its ack challenge; a longer body,
// Replies above 0 or Reliable goes to the courier (Mail) and is answered with the message's id.
type MessageRequest struct {
	Body      string `json:"body"`
	Recipient string `json:"recipient"`
	// Replies is how many reply blocks go with the message, 0 to courier.MaxReplies: a whole
	// number, which JSON may also write 2.0.
	Replies float64 `json:"replies,omitempty"`
	// Reliable asks for the courier's delivery (acknowledged, resent) even for a short body.
	Reliable bool `json:"reliable,omitempty"`
}

// ReplyRequest is the body of POST /messages/inbox/{seq}/reply.
type ReplyRequest struct {
	Body string `json:"body"`
}

// ReplyAccepted is the answer of POST /messages/inbox/{seq}/reply.
type ReplyAccepted struct {
	ID          string `json:"id"`
	RepliesLeft int    `json:"repliesLeft"`
}

// OutgoingMessage is one of this node's messages as GET /messages/{id} shows it (without its
// body). Fragments is how many packets it takes, Acknowledged how many of them the recipient
// acknowledged; Attempts counts the transmission rounds.
type OutgoingMessage struct {
	ID           string `json:"id"`
	Recipient    string `json:"recipient"`
	State        string `json:"state"`
	Reason       string `json:"reason"`
	Fragments    int    `json:"fragments"`
	Acknowledged int    `json:"acknowledged"`
	Attempts     int    `json:"attempts"`
	CreatedAt    string `json:"createdAt"`
	UpdatedAt    string `json:"updatedAt"`
	Replies      int    `json:"replies"`
}

// InboxMessage is a message kept for the app as GET /messages and POST /messages/pop show it:
// never its reply blocks, only how many are left. Body is the received text (bytes that are not
// UTF-8 read as U+FFFD); SentAt is the sender's own claim, absent when it made none; InReplyTo is
// set on a reply, the id of this node's message it answers.
type InboxMessage struct {
	Seq         uint64 `json:"seq"`
	ID          string `json:"id"`
	Body        string `json:"body"`
	SentAt      string `json:"sentAt,omitempty"`
	ReceivedAt  string `json:"receivedAt"`
	Reply       bool   `json:"reply"`
	InReplyTo   string `json:"inReplyTo,omitempty"`
	RepliesLeft int    `json:"repliesLeft"`
}

// Bounds of GET /messages.
const (
	// DefaultInboxLimit is how many messages GET /messages lists without ?limit=.
	DefaultInboxLimit = 100
	// MaxInboxLimit is the largest ?limit= of GET /messages.
	MaxInboxLimit = 1000
)

// errNoMail answers the courier's operations on a node without it.
var errNoMail = &Error{http.StatusServiceUnavailable, CodeUnknownFailure,
	"this node sends no long, reliable or answerable messages and keeps no inbox (it runs without its courier)"}

// messageBodyLimit is the largest request body of POST /messages and of a reply: a body of the
// maxMessageBytes setting written with a \u escape for every byte (6 bytes each in JSON), and
// room for the other fields; never less than MaxBodyBytes.
func (s *Server) messageBodyLimit() int64 {
	if s.cfg.Mail == nil {
		return MaxBodyBytes
	}
	n := int64(s.cfg.Settings.Get().MaxMessageBytes)
	if n <= 0 {
		n = courier.DefaultMaxBody
	}
	return max(MaxBodyBytes, 6*n+4096)
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	var req MessageRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if req.Body == "" {
		writeError(w, http.StatusBadRequest, CodeInvalidInput, "body must be a non-empty message text")
		return
	}
	replies := int(req.Replies)
	if float64(replies) != req.Replies || replies < 0 || replies > courier.MaxReplies {
		writeError(w, http.StatusBadRequest, CodeInvalidInput, "replies must be a whole number from 0 to "+strconv.Itoa(courier.MaxReplies))
		return
	}
	// The courier takes what the original interface could not ask for; the router sends the
	// original's messages as it always did (and refuses a long one, 400 MESSAGE_TOO_LARGE, on a
	// node without a courier).
	framed := s.cfg.Mail != nil && (replies > 0 || req.Reliable || len(req.Body) > packet.MaxMessageSize)
	switch {
	case !framed && (replies > 0 || req.Reliable):
		s.fail(w, "send message", errNoMail)
		return
	case !framed && s.cfg.Messenger == nil:
		s.fail(w, "send message", errNoChain)
		return
	}
	id, ok := s.recipient(w, req.Recipient)
	if !ok {
		return
	}
	if id == s.cfg.Self.PeerID() {
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "recipient is this node itself, which cannot send a message to itself")
		return
	}
	if framed {
		msgID, err := s.cfg.Mail.Send(courier.Request{Recipient: id, Body: []byte(req.Body), Replies: replies})
		if err != nil {
			s.fail(w, "send message", err)
			return
		}
		ref := messageID(msgID)
		w.Header().Set("Location", Prefix+"/messages/"+ref)
		writeJSON(w, http.StatusAccepted, ref)
		return
	}
	sent, err := s.cfg.Messenger.Send(r.Context(), id, req.Body)
	if err != nil {
		s.fail(w, "send message", err)
		return
	}
	writeJSON(w, http.StatusAccepted, hexBytes(sent.Ack[:]))
}

// recipient resolves a message's recipient as the admin commands do: "me" is the node, a valid
// PeerId is itself, anything else is looked up as an alias. It answers 400 INVALID_PEERID when
// it names no peer.
func (s *Server) recipient(w http.ResponseWriter, v string) (peer.ID, bool) {
	if v == "" {
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "recipient is required")
		return "", false
	}
	id, err := s.cfg.Peers.Resolve(v)
	switch {
	case errors.Is(err, peers.ErrUnknownName):
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "recipient "+quote(v)+" is neither a valid secp256k1 PeerId nor an alias")
		return "", false
	case err != nil:
		s.internalError(w, "resolve recipient", err)
		return "", false
	}
	return id, true
}

// mail returns the courier or answers 503 on a node without it.
func (s *Server) mail(w http.ResponseWriter, op string) (Mail, bool) {
	if s.cfg.Mail == nil {
		s.fail(w, op, errNoMail)
		return nil, false
	}
	return s.cfg.Mail, true
}

// messageID writes a message id as the API shows it (courier.FormatID).
func messageID(id [16]byte) string { return courier.FormatID(id) }

// inboxSeq reads the {seq} of an inbox path, answering 400 when it is not one.
func inboxSeq(w http.ResponseWriter, r *http.Request) (uint64, bool) {
	seq, err := strconv.ParseUint(r.PathValue("seq"), 10, 64)
	if err != nil || seq == 0 {
		writeError(w, http.StatusBadRequest, CodeInvalidInput, "seq must be an inbox message's seq: a whole number of at least 1")
		return 0, false
	}
	return seq, true
}

func (s *Server) getMessage(w http.ResponseWriter, r *http.Request) {
	id, ok := courier.ParseID(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusBadRequest, CodeInvalidInput, "id must be a message id: 0x and 32 hexadecimal digits")
		return
	}
	mail, ok := s.mail(w, "message status")
	if !ok {
		return
	}
	m, err := mail.Status(id)
	if err != nil {
		s.fail(w, "message status", err)
		return
	}
	writeJSON(w, http.StatusOK, outgoingView(m))
}

// outgoingView is an outgoing message as the API shows it.
func outgoingView(m courier.OutboxMessage) OutgoingMessage {
	acked := courier.Acknowledged(m)
	return OutgoingMessage{
		ID: messageID(m.ID), Recipient: m.Recipient, State: m.State, Reason: m.Reason,
		Fragments: m.Fragments, Acknowledged: acked, Attempts: m.Attempts,
		CreatedAt: m.Created.UTC().Format(TimeFormat), UpdatedAt: m.Updated.UTC().Format(TimeFormat),
		Replies: m.Replies,
	}
}

// inboxView is a kept message as the API shows it.
func inboxView(m courier.InboxMessage) InboxMessage {
	v := InboxMessage{Seq: m.Seq, ID: messageID(m.ID), Body: string(m.Body), ReceivedAt: m.Received.UTC().Format(TimeFormat),
		Reply: m.Reply, RepliesLeft: len(m.ReplyBlocks)}
	if m.SentAt != 0 && m.SentAt <= maxMillis {
		v.SentAt = time.UnixMilli(int64(m.SentAt)).UTC().Format(TimeFormat)
	}
	if m.Reply {
		v.InReplyTo = messageID(m.InReplyTo)
	}
	return v
}

// maxMillis is the last millisecond of year 9999, the last time TimeFormat writes: a sender's
// claim beyond it is left out.
const maxMillis = 253402300799999

func (s *Server) getInbox(w http.ResponseWriter, r *http.Request) {
	since, _, ok := queryNumber(w, r, "since", 0, 1<<63-1, "since must be an inbox seq: a whole number, 0 or more, given once")
	if !ok {
		return
	}
	limit, given, ok := queryNumber(w, r, "limit", 1, MaxInboxLimit, "limit must be a whole number from 1 to "+strconv.Itoa(MaxInboxLimit))
	if !ok {
		return
	}
	if !given {
		limit = DefaultInboxLimit
	}
	mail, ok := s.mail(w, "list inbox")
	if !ok {
		return
	}
	list, total, err := mail.Inbox(uint64(since), int(limit))
	if err != nil {
		s.fail(w, "list inbox", err)
		return
	}
	out := make([]InboxMessage, 0, len(list))
	for _, m := range list {
		out = append(out, inboxView(m))
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(total))
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) postPop(w http.ResponseWriter, r *http.Request) {
	mail, ok := s.mail(w, "pop inbox")
	if !ok {
		return
	}
	m, ok, err := mail.Pop()
	switch {
	case err != nil:
		s.fail(w, "pop inbox", err)
	case !ok:
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, http.StatusOK, inboxView(m))
	}
}

func (s *Server) deleteInboxMessage(w http.ResponseWriter, r *http.Request) {
	seq, ok := inboxSeq(w, r)
	if !ok {
		return
	}
	mail, ok := s.mail(w, "delete message")
	if !ok {
		return
	}
	deleted, err := mail.Delete(seq)
	switch {
	case err != nil:
		s.fail(w, "delete message", err)
	case !deleted:
		writeError(w, http.StatusNotFound, CodeMessageNotFound, "no message "+strconv.FormatUint(seq, 10)+" in the inbox")
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) postReply(w http.ResponseWriter, r *http.Request) {
	seq, ok := inboxSeq(w, r)
	if !ok {
		return
	}
	var req ReplyRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if req.Body == "" {
		writeError(w, http.StatusBadRequest, CodeInvalidInput, "body must be a non-empty message text")
		return
	}
	mail, ok := s.mail(w, "reply")
	if !ok {
		return
	}
	id, left, err := mail.Reply(r.Context(), seq, []byte(req.Body))
	if err != nil {
		s.fail(w, "reply", err)
		return
	}
	writeJSON(w, http.StatusAccepted, ReplyAccepted{ID: messageID(id), RepliesLeft: left})
}
