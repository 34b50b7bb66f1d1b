// Package contracts holds relayd's compiled Solidity contracts (RelayToken, RelayChannels) and
// their go-ethereum abigen v2 bindings. Everything here except doc.go and the tests is generated
// by scripts/gen-contracts.sh from contracts/*.sol with the solc pinned in contracts/package.json;
// edit the Solidity sources and regenerate, never the generated files. TestGeneratedUpToDate fails
// when the committed files drift from the sources.
//
// The package only describes the contracts (ABI, bytecode, pack/unpack helpers); talking to a
// chain is internal/chain's job. docs/PROTOCOL.md section 4 specifies the contracts.
package contracts

//go:generate ../../../scripts/gen-contracts.sh
