package chain

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
)

// UnderpayFirst makes c offer a fee cap and tip of 1 wei for the first version of every
// transaction, below any base fee: the transaction stays in the pool until replaced.
func UnderpayFirst(c *Client) {
	c.firstFees = func(f fees) fees {
		if f.base == nil {
			return fees{price: big.NewInt(1)}
		}
		return fees{base: f.base, tip: big.NewInt(1), feeCap: big.NewInt(1)}
	}
}

// SendOnly sends a transfer of value wei to to and returns its hash without waiting for it (a
// node that crashes right after sending).
func SendOnly(ctx context.Context, c *Client, to common.Address, value *big.Int) (common.Hash, error) {
	tx, err := c.send(ctx, to, value, nil)
	if err != nil {
		return common.Hash{}, err
	}
	c.untrack(tx.Hash())
	return tx.Hash(), nil
}
