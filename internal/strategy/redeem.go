package strategy

import "math/big"

// RedeemPolicy is the auto-redeem strategy: when the acknowledged tickets waiting for redemption
// reach Count tickets or Value in worth, the node redeems them all; and it redeems an incoming
// channel's tickets as soon as that channel starts closing (the tickets are void once it is
// closed). Off when Enabled is false. In either case it never redeems when the gas would cost
// more than MaxGasShare of the value redeemed.
type RedeemPolicy struct {
	Enabled bool
	// Count is the number of unredeemed tickets that triggers a redemption (0: no count limit).
	Count uint64
	// Value is the worth of unredeemed tickets that triggers a redemption (nil or 0: no value
	// limit).
	Value *big.Int
	// MaxGasShare is the most the redemption's gas may cost as a share of the value it redeems,
	// counting one unit of the native currency as one token (0.05: 5 %; 0: no limit).
	MaxGasShare float64
}

// WorthGas reports whether redeeming tickets worth value (smallest unit) is worth gasCost
// (native wei): gasCost ≤ MaxGasShare × value, or MaxGasShare is 0.
func (p RedeemPolicy) WorthGas(gasCost, value *big.Int) bool {
	if p.MaxGasShare <= 0 {
		return true
	}
	if value == nil || value.Sign() <= 0 {
		return false
	}
	allowed, _ := new(big.Float).Mul(new(big.Float).SetInt(value), big.NewFloat(p.MaxGasShare)).Int(nil)
	return gasCost.Cmp(allowed) <= 0
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
