// Package chain is relayd's Ethereum side: a Client that talks to any JSON-RPC provider (balances,
// transfers, announcing, funding and closing channels, redeeming tickets, deploying the
// contracts), and an Indexer that follows the channels contract's events into a channels.Graph
// and the node's store. docs/PROTOCOL.md section 4 specifies the contracts; their ABI and
// bindings are in the contracts subpackage.
//
// Transactions. A Client signs with one key and keeps the account's nonce itself: it reads the
// pending nonce once, increments it under a mutex for every transaction it sends, and re-reads it
// when the provider answers "nonce too low" or "replacement transaction underpriced" (another
// sender used the account) or when a send failed in a way that leaves its fate unknown. Every
// transaction is gas-estimated first, so a call the contract would revert fails with a
// *RevertError (ErrReverted) carrying the decoded custom error, and nothing is sent. Fees are
// EIP-1559 (tip from eth_maxPriorityFeePerGas, cap 2×base fee + tip) when the latest block has a
// base fee, legacy gas price otherwise. Receipts are polled every ReceiptPoll (25 ms by
// default) instead of bind.WaitMined's second; over a WebSocket provider new heads wake the
// poll at once. Once the receipt is read, the client waits (up to CallTimeout) for the
// provider's latest block to reach the receipt's, which go-ethereum moves only after the receipt
// is readable: an operation that returns has its effects in every read at "latest" that
// follows, and a transaction that depends on the previous one is estimated against it. A
// transaction not mined within StallTimeout (a minute by default) is replaced with the same
// nonce at fees raised by 12.5 %, and nonces below it that a crashed earlier run left stuck in
// the pool are filled (tx_stall.go).
//
// What needs no account of its own goes through an RPC (DialRPC): Deploy (with an operator's key,
// `relayd deploy`) and the read-only checks of a deployment (ReadChannels, ReadTokenSymbol;
// internal/networks.Verify), with the same redaction of the provider URL and classification of
// errors as a Client's.
//
// Errors a provider causes (connection refused or reset, timeouts of a single call, HTTP 5xx)
// wrap ErrProviderUnavailable, so the API can answer 503 rather than 500.
//
// Indexing. The Indexer scans FilterLogs in bounded block ranges from its persisted cursor,
// commits the cursor and every channel and announcement that changed in one store transaction,
// and only then applies them to the Graph in one batch, so neither a restart nor a reader ever
// sees a state the chain did not have at the end of an indexed block. It stays Confirmations
// blocks behind the head (DefaultConfirmations), and rolls back through the store's undo
// journal when a reorganisation removes indexed blocks. See Indexer.
//
// The package must not import go-ethereum's simulated backend or node packages (they pull in a
// whole Ethereum node): internal/devchain and tests do that. It imports the pure relayd packages
// channels, tickets, token and vrf (the VRF proofs a redemption of a ticket below
// tickets.MaxWinProb carries, made with the client's key), and internal/store only through the
// StateStore interface's types.
package chain
