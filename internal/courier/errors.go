package courier

import "errors"

// The courier's sentinels; the REST layer maps them to status codes.
var (
	// ErrEmpty: a message without a body.
	ErrEmpty = errors.New("the message body is empty")
	// ErrTooLarge: a body beyond the maxMessageBytes setting.
	ErrTooLarge = errors.New("the message body is too large")
	// ErrInvalid: a request the courier cannot carry out as asked (too many reply blocks).
	ErrInvalid = errors.New("invalid message request")
	// ErrNotFound: no such message.
	ErrNotFound = errors.New("no such message")
	// ErrFull: the inbox or the outbox is at its quota.
	ErrFull = errors.New("the message store is full")
	// ErrNoReplyBlock: the message has no reply block left to answer it with.
	ErrNoReplyBlock = errors.New("no reply block is left for this message")
	// ErrReplyTooLarge: an answer needs more packets than the message has reply blocks left.
	ErrReplyTooLarge = errors.New("the answer needs more reply blocks than are left")
)
