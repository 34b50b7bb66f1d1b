package admin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/courier"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/ws"
)

// The inbox command's bounds.
const (
	// inboxListed is how many messages one inbox command lists.
	inboxListed = 50
	// inboxBodyShown is how much of a body inbox shows, in bytes; the rest is counted.
	inboxBodyShown = 1000
)

var errNoMail = errors.New("this node sends no long, reliable or answerable messages and keeps no inbox (it runs without its courier)")

// mailCommands are the commands of the courier: the inbox, answers and the state of a message.
func (c *console) mailCommands() []Command {
	return []Command{
		{Name: "inbox", Usage: "inbox [<seq>]", Help: fmt.Sprintf("List the received messages the node keeps for the app "+
			"(after message <seq>, %d at most, oldest first), with the reply blocks each has left.", inboxListed), Run: c.inbox},
		{Name: "reply", Usage: "reply <seq> <message>",
			Help: "Answer the received message <seq> anonymously, on the reply blocks that came with it (one per packet).", Run: c.reply},
		{Name: "status", Usage: "status <message id>", Help: "Show what became of a message sent through the courier (0x and 32 hexadecimal digits).",
			Run: c.status},
	}
}

// MailEvent publishes on every admin connection through hub what the courier reports (the
// fields of courier.Event): a message received, as Received shows one (three log lines and the
// message frame); one of this node's messages delivered or failed, and a message to it given up
// incomplete, as one log line. A message whose lines the router's inbox already publishes
// (Received) must not come here too.
func MailEvent(hub *ws.Hub) func(kind string, id [16]byte, reason string, m courier.InboxMessage) {
	received := Received(hub)
	return func(kind string, id [16]byte, reason string, m courier.InboxMessage) {
		var line string
		switch kind {
		case "received":
			sent := m.Received
			if m.SentAt != 0 {
				sent = time.UnixMilli(int64(m.SentAt))
			}
			received(router.Message{Text: string(m.Body), SentAt: sent, ReceivedAt: m.Received})
			return
		case courier.StateDelivered:
			line = "Message " + courier.FormatID(id) + " delivered"
		case courier.StateFailed:
			line = "Message " + courier.FormatID(id) + " failed: " + reason
		case "incomplete":
			line = "A message to this node (" + courier.FormatID(id) + ") was given up: " + reason
		default:
			return
		}
		hub.Log(line)
	}
}

// sendMail hands a message to the courier and says its id.
func (c *console) sendMail(to peer.ID, a sendArgs) ([]string, error) {
	if to == c.cfg.Self.PeerID() {
		return nil, usage("the recipient is this node, which cannot send a message to itself")
	}
	id, err := c.cfg.Mail.Send(courier.Request{Recipient: to, Body: []byte(a.Text), Replies: a.Replies})
	if err != nil {
		return nil, mailFailure(err)
	}
	return []string{fmt.Sprintf("Message %s accepted for %s: %d bytes, %d reply blocks. The node sends it until it is delivered; status %[1]s shows how far it got.",
		courier.FormatID(id), to, len(a.Text), a.Replies)}, nil
}

// mailFailure says why the courier refused: its sentence with the counts it adds, without the
// store's cause it wraps.
func mailFailure(err error) error {
	for _, s := range []error{courier.ErrFull, courier.ErrNotFound, courier.ErrNoReplyBlock, courier.ErrEmpty} {
		if errors.Is(err, s) {
			return s
		}
	}
	return sendFailure(err) // the router's, for an answer sent at once
}

func (c *console) inbox(_ context.Context, args string) ([]string, error) {
	var since uint64
	if args != "" {
		n, err := strconv.ParseUint(args, 10, 64)
		if err != nil {
			return nil, usage("inbox takes the seq after which to list, a whole number")
		}
		since = n
	}
	if c.cfg.Mail == nil {
		return nil, errNoMail
	}
	list, total, err := c.cfg.Mail.Inbox(since, inboxListed+1)
	if err != nil {
		return nil, mailFailure(err)
	}
	if len(list) == 0 {
		if total == 0 {
			return []string{"The inbox is empty."}, nil
		}
		return []string{fmt.Sprintf("No message after #%d (the inbox keeps %d).", since, total)}, nil
	}
	more := len(list) > inboxListed
	if more {
		list = list[:inboxListed]
	}
	out := []string{fmt.Sprintf("The inbox keeps %d messages:", total)}
	for _, m := range list {
		out = append(out, inboxLine(m))
	}
	if more {
		out = append(out, fmt.Sprintf("More follow: inbox %d", list[len(list)-1].Seq))
	}
	return out, nil
}

// inboxLine is one kept message: its seq, when it arrived, what it answers or how many answers it
// can still get, and its text (the frame escapes it), shortened.
func inboxLine(m courier.InboxMessage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s", m.Seq, m.Received.UTC().Format(ws.TimeFormat))
	if m.Reply {
		fmt.Fprintf(&b, ", reply to %s", courier.FormatID(m.InReplyTo))
	}
	if n := len(m.ReplyBlocks); n > 0 {
		fmt.Fprintf(&b, ", %d replies left", n)
	}
	b.WriteString(": ")
	body := m.Body
	if len(body) > inboxBodyShown {
		cut := inboxBodyShown
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		fmt.Fprintf(&b, "%s… (%d bytes)", body[:cut], len(body))
		return b.String()
	}
	b.Write(body)
	return b.String()
}

func (c *console) reply(ctx context.Context, args string) ([]string, error) {
	first, text := cutWord(args)
	text = strings.TrimSpace(text)
	seq, err := strconv.ParseUint(first, 10, 64)
	if err != nil || seq == 0 || text == "" {
		return nil, usage("reply needs a message's seq (see inbox) and the answer")
	}
	if c.cfg.Mail == nil {
		return nil, errNoMail
	}
	id, left, err := c.cfg.Mail.Reply(ctx, seq, []byte(text))
	switch {
	case errors.Is(err, courier.ErrNotFound):
		return nil, fmt.Errorf("no message #%d in the inbox", seq)
	case errors.Is(err, courier.ErrNoReplyBlock):
		return nil, fmt.Errorf("message #%d has no reply block left to answer on", seq)
	case errors.Is(err, courier.ErrReplyTooLarge), errors.Is(err, courier.ErrTooLarge):
		return nil, err // the counts
	case err != nil:
		return nil, mailFailure(err)
	}
	return []string{fmt.Sprintf("Reply %s sent on message #%d's reply blocks; %d left.", courier.FormatID(id), seq, left)}, nil
}

func (c *console) status(_ context.Context, args string) ([]string, error) {
	id, ok := courier.ParseID(args)
	if !ok {
		return nil, usage("status needs a message id: 0x and 32 hexadecimal digits")
	}
	if c.cfg.Mail == nil {
		return nil, errNoMail
	}
	m, err := c.cfg.Mail.Status(id)
	if errors.Is(err, courier.ErrNotFound) {
		return nil, fmt.Errorf("this node sent no message %s through the courier", courier.FormatID(id))
	}
	if err != nil {
		return nil, mailFailure(err)
	}
	line := fmt.Sprintf("Message %s to %s: %s, %d of %d packets acknowledged, %d rounds, %d reply blocks; accepted %s, last change %s",
		courier.FormatID(m.ID), m.Recipient, m.State, courier.Acknowledged(m), m.Fragments, m.Attempts, m.Replies,
		m.Created.UTC().Format(ws.TimeFormat), m.Updated.UTC().Format(ws.TimeFormat))
	if m.Reason != "" {
		line += "; " + m.Reason
	}
	return []string{line}, nil
}
