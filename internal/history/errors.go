package history

import "errors"

var (
	// ErrUnknownResolution means a View asked for a resolution that is not hour, day or week.
	ErrUnknownResolution = errors.New("history: unknown resolution (hour, day or week)")
	// ErrCorrupt means a stored record does not decode.
	ErrCorrupt = errors.New("history: corrupt record")
)
