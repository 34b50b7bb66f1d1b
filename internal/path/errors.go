package path

import "errors"

// Errors returned by Select. Match them with errors.Is.
var (
	// ErrNoPath means no route of the requested length exists over open channels between
	// distinct, good-quality nodes, whatever the balances.
	ErrNoPath = errors.New("path: no path to recipient")

	// ErrNotEnoughBalance means routes exist over open channels, but on each of them some
	// channel's balance cannot cover the ticket it would carry (a depleted or underfunded
	// channel).
	ErrNotEnoughBalance = errors.New("path: channel balance too low for the path's tickets")

	// ErrBadRelayers means the requested number of relayers is outside [MinRelayers,
	// MaxRelayers].
	ErrBadRelayers = errors.New("path: relayer count out of range")

	// ErrBadPadding means a negative padding was asked of SelectPadded or SelectLoopPadded.
	ErrBadPadding = errors.New("path: negative ticket padding")

	// ErrUnknownNode means the sender or the recipient is not a node of the graph, or they are
	// the same node.
	ErrUnknownNode = errors.New("path: sender or recipient not in graph")
)
