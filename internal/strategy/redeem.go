package strategy

import "math/big"

// RedeemPolicy is the auto-redeem strategy: when the acknowledged tickets waiting for redemption
// reach Count tickets or Value in worth, the node redeems them all; and it redeems an incoming
// channel's tickets as soon as that channel starts closing (the tickets are void once it is
// closed). Off when Enabled is false.
type RedeemPolicy struct {
	Enabled bool
	// Count is the number of unredeemed tickets that triggers a redemption (0: no count limit).
	Count uint64
	// Value is the worth of unredeemed tickets that triggers a redemption (nil or 0: no value
	// limit).
	Value *big.Int
}

// ShouldRedeem reports whether p redeems now, with count tickets worth value waiting.
func (p RedeemPolicy) ShouldRedeem(count uint64, value *big.Int) bool {
	if !p.Enabled || count == 0 {
		return false
	}
	if p.Count > 0 && count >= p.Count {
		return true
	}
	return p.Value != nil && p.Value.Sign() > 0 && value != nil && value.Cmp(p.Value) >= 0
}
