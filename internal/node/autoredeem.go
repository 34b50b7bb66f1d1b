package node

import "time"

// autoRedeemInterval is how often the auto-redeem strategy (ledger.AutoRedeem) looks at the
// tickets waiting; tests shorten it.
var autoRedeemInterval = 10 * time.Second
