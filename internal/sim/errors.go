package sim

import "errors"

// ErrBadConfig means a Config field is out of range; the wrapped message names it.
var ErrBadConfig = errors.New("sim: bad config")
