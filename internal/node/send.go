package node

import (
	"strings"
	"unicode"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/ws"
)

// sendArgs is a parsed `send` command.
type sendArgs struct {
	// Path names the relayers then the recipient when the operator gave
	// them ("r1,r2,peer"); Direct is a 0-hop message (",peer"); with
	// neither, the node picks the relayers for Path[0], the recipient.
	Path   []string
	Direct bool
	Auto   bool
	Text   string
}

// parseSend reads the arguments of `send`: "<peer> <text>" (automatic path),
// ",<peer> <text>" (0-hop) or "<r1>,<r2>,<peer> <text>" (explicit path). The
// text keeps its inner spacing.
func parseSend(args string) (sendArgs, bool) {
	i := strings.IndexFunc(args, unicode.IsSpace)
	if i < 0 {
		return sendArgs{}, false
	}
	target, text := args[:i], strings.TrimLeftFunc(args[i:], unicode.IsSpace)
	if text == "" {
		return sendArgs{}, false
	}
	out := sendArgs{Text: text}
	if rest, ok := strings.CutPrefix(target, ","); ok {
		if rest == "" || strings.Contains(rest, ",") {
			return sendArgs{}, false
		}
		out.Direct, out.Path = true, []string{rest}
		return out, true
	}
	out.Path = strings.Split(target, ",")
	for _, p := range out.Path {
		if p == "" {
			return sendArgs{}, false
		}
	}
	out.Auto = len(out.Path) == 1
	return out, true
}

// checkOwnHops refuses a `send` path that names this node (self): as the
// recipient (",me hi", the node cannot send a message to itself) or as a
// relayer. The operator gets a usage line instead of the relay's bare
// "bad route".
func checkOwnHops(self peer.ID, hops []peer.ID) error {
	if hops[len(hops)-1] == self {
		return &ws.UsageError{Reason: "the recipient is this node, which cannot send a message to itself"}
	}
	for _, h := range hops[:len(hops)-1] {
		if h == self {
			return &ws.UsageError{Reason: "a relayer is this node, which cannot relay its own message"}
		}
	}
	return nil
}
