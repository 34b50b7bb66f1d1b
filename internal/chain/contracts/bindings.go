// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package contracts

import (
	"bytes"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Reference imports to suppress errors if they are not otherwise used.
var (
	_ = bytes.Equal
	_ = errors.New
	_ = big.NewInt
	_ = common.Big1
	_ = types.BloomLookup
	_ = abi.ConvertType
)

// RelayChannelsBatchTicket is an auto generated low-level Go binding around an user-defined struct.
type RelayChannelsBatchTicket struct {
	Amount    *big.Int
	Index     uint64
	WinProb   uint64
	Challenge common.Address
	R         [32]byte
	Vs        [32]byte
	Response  [32]byte
}

// RelayChannelsChannelTickets is an auto generated low-level Go binding around an user-defined struct.
type RelayChannelsChannelTickets struct {
	ChannelId [32]byte
	Source    common.Address
	Epoch     uint32
	Tickets   []RelayChannelsBatchTicket
}

// RelayChannelsTicket is an auto generated low-level Go binding around an user-defined struct.
type RelayChannelsTicket struct {
	ChannelId [32]byte
	Amount    *big.Int
	Index     uint64
	Epoch     uint32
	WinProb   uint64
	Challenge common.Address
	Signature []byte
}

// RelayChannelsMetaData contains all meta data concerning the RelayChannels contract.
var RelayChannelsMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"contractIERC20\",\"name\":\"token_\",\"type\":\"address\"},{\"internalType\":\"uint64\",\"name\":\"closurePeriodSeconds\",\"type\":\"uint64\"},{\"internalType\":\"uint64\",\"name\":\"minWinProb_\",\"type\":\"uint64\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"expected\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"actual\",\"type\":\"address\"}],\"name\":\"ChallengeMismatch\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ChannelNotOpen\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ChannelNotPendingToClose\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ChannelPendingToClose\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint64\",\"name\":\"closureTime\",\"type\":\"uint64\"}],\"name\":\"ClosureTimeNotReached\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint32\",\"name\":\"ticketEpoch\",\"type\":\"uint32\"},{\"internalType\":\"uint32\",\"name\":\"channelEpoch\",\"type\":\"uint32\"}],\"name\":\"EpochMismatch\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint64\",\"name\":\"ticketIndex\",\"type\":\"uint64\"},{\"internalType\":\"uint64\",\"name\":\"lastRedeemed\",\"type\":\"uint64\"}],\"name\":\"IndexNotIncreasing\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"balance\",\"type\":\"uint256\"}],\"name\":\"InsufficientChannelBalance\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"length\",\"type\":\"uint256\"}],\"name\":\"InvalidPublicKeyLength\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"InvalidResponse\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"InvalidSignature\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint64\",\"name\":\"winProb\",\"type\":\"uint64\"}],\"name\":\"InvalidWinProb\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotChannelDestination\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NotOwner\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"derived\",\"type\":\"address\"}],\"name\":\"PublicKeyNotSender\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"}],\"name\":\"SafeERC20FailedOperation\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"SameSourceAndDestination\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"signer\",\"type\":\"address\"}],\"name\":\"SignerNotSource\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"TicketNotWinning\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroAddress\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"ZeroAmount\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"bytes\",\"name\":\"publicKey\",\"type\":\"bytes\"},{\"indexed\":false,\"internalType\":\"bytes\",\"name\":\"multiaddr\",\"type\":\"bytes\"}],\"name\":\"Announcement\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"source\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"destination\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"balance\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint64\",\"name\":\"ticketIndex\",\"type\":\"uint64\"},{\"indexed\":false,\"internalType\":\"uint32\",\"name\":\"epoch\",\"type\":\"uint32\"},{\"indexed\":false,\"internalType\":\"uint8\",\"name\":\"status\",\"type\":\"uint8\"},{\"indexed\":false,\"internalType\":\"uint64\",\"name\":\"closureTime\",\"type\":\"uint64\"}],\"name\":\"ChannelUpdated\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint64\",\"name\":\"minWinProb\",\"type\":\"uint64\"}],\"name\":\"MinWinProbUpdated\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint64\",\"name\":\"index\",\"type\":\"uint64\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"TicketRedeemed\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint64\",\"name\":\"index\",\"type\":\"uint64\"},{\"indexed\":false,\"internalType\":\"bytes\",\"name\":\"reason\",\"type\":\"bytes\"}],\"name\":\"TicketRejected\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"MAX_WIN_PROB\",\"outputs\":[{\"internalType\":\"uint64\",\"name\":\"\",\"type\":\"uint64\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes\",\"name\":\"publicKey\",\"type\":\"bytes\"},{\"internalType\":\"bytes\",\"name\":\"multiaddr\",\"type\":\"bytes\"}],\"name\":\"announce\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"response\",\"type\":\"bytes32\"}],\"name\":\"challengeOf\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"pure\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"source\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"destination\",\"type\":\"address\"}],\"name\":\"channelIdOf\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"pure\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"}],\"name\":\"channels\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"balance\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"ticketIndex\",\"type\":\"uint64\"},{\"internalType\":\"uint32\",\"name\":\"epoch\",\"type\":\"uint32\"},{\"internalType\":\"enumRelayChannels.ChannelStatus\",\"name\":\"status\",\"type\":\"uint8\"},{\"internalType\":\"uint64\",\"name\":\"closureTime\",\"type\":\"uint64\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"source\",\"type\":\"address\"}],\"name\":\"closeIncomingChannel\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"closurePeriod\",\"outputs\":[{\"internalType\":\"uint64\",\"name\":\"\",\"type\":\"uint64\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"destination\",\"type\":\"address\"}],\"name\":\"finalizeChannelClosure\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"destination\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"fundChannel\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"destination\",\"type\":\"address\"}],\"name\":\"initiateChannelClosure\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"hash\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"response\",\"type\":\"bytes32\"},{\"internalType\":\"uint64\",\"name\":\"winProb\",\"type\":\"uint64\"}],\"name\":\"isWinning\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"pure\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"minWinProb\",\"outputs\":[{\"internalType\":\"uint64\",\"name\":\"\",\"type\":\"uint64\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"owner\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"source\",\"type\":\"address\"},{\"components\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"index\",\"type\":\"uint64\"},{\"internalType\":\"uint32\",\"name\":\"epoch\",\"type\":\"uint32\"},{\"internalType\":\"uint64\",\"name\":\"winProb\",\"type\":\"uint64\"},{\"internalType\":\"address\",\"name\":\"challenge\",\"type\":\"address\"},{\"internalType\":\"bytes\",\"name\":\"signature\",\"type\":\"bytes\"}],\"internalType\":\"structRelayChannels.Ticket\",\"name\":\"ticket\",\"type\":\"tuple\"},{\"internalType\":\"bytes32\",\"name\":\"response\",\"type\":\"bytes32\"}],\"name\":\"redeemTicket\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"components\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"source\",\"type\":\"address\"},{\"internalType\":\"uint32\",\"name\":\"epoch\",\"type\":\"uint32\"},{\"components\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"index\",\"type\":\"uint64\"},{\"internalType\":\"uint64\",\"name\":\"winProb\",\"type\":\"uint64\"},{\"internalType\":\"address\",\"name\":\"challenge\",\"type\":\"address\"},{\"internalType\":\"bytes32\",\"name\":\"r\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"vs\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"response\",\"type\":\"bytes32\"}],\"internalType\":\"structRelayChannels.BatchTicket[]\",\"name\":\"tickets\",\"type\":\"tuple[]\"}],\"internalType\":\"structRelayChannels.ChannelTickets[]\",\"name\":\"groups\",\"type\":\"tuple[]\"}],\"name\":\"redeemTickets\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint64\",\"name\":\"minWinProb_\",\"type\":\"uint64\"}],\"name\":\"setMinWinProb\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"channelId\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"index\",\"type\":\"uint64\"},{\"internalType\":\"uint32\",\"name\":\"epoch\",\"type\":\"uint32\"},{\"internalType\":\"uint64\",\"name\":\"winProb\",\"type\":\"uint64\"},{\"internalType\":\"address\",\"name\":\"challenge\",\"type\":\"address\"}],\"name\":\"ticketHash\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"token\",\"outputs\":[{\"internalType\":\"contractIERC20\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"}]",
	ID:  "6d3faf96a38a44237bb2c5bcf3aaf5228b",
	Bin: "0x60e060405234801561000f575f5ffd5b506040516123cc3803806123cc83398101604081905261002e91610129565b6001600160a01b0383166100555760405163d92e233d60e01b815260040160405180910390fd5b6100686001670100000000000000610176565b6001600160401b0316816001600160401b031611156100a95760405163ea7c080160e01b81526001600160401b038216600482015260240160405180910390fd5b6001600160a01b0383166080526001600160401b0382811660a0523360c052600180546001600160401b03191691831691821790556040517f07dba1554f142301abdb3e04cc985a8cda14d53663fec4858c56c1dc927518ba905f90a25050506101a7565b80516001600160401b0381168114610124575f5ffd5b919050565b5f5f5f6060848603121561013b575f5ffd5b83516001600160a01b0381168114610151575f5ffd5b925061015f6020850161010e565b915061016d6040850161010e565b90509250925092565b6001600160401b0382811682821603908111156101a157634e487b7160e01b5f52601160045260245ffd5b92915050565b60805160a05160c0516121d16101fb5f395f818161025b01526109e401525f818161029a0152610dbb01525f8181610320015281816109a401528181610c4d01528181610ebd0152610ff101526121d15ff3fe608060405234801561000f575f5ffd5b5060043610610111575f3560e01c80637d923aeb1161009e578063d0926cbc1161006e578063d0926cbc146102cf578063d2e51673146102e2578063e8592f1a146102f5578063ee9e9c4b14610308578063fc0c546a1461031b575f5ffd5b80637d923aeb146102355780638da5cb5b1461025657806392e3802914610295578063b4037e80146102bc575f5ffd5b80635a4ad35e116100e45780635a4ad35e146101755780635b85b19a146101885780635c87beb41461019b578063665a055e146101ae5780637a7ebd7b146101d1575f5ffd5b8063033aad2614610115578063075e389f1461013a5780631a7ffe7a1461014f57806328f7fd7814610162575b5f5ffd5b61011d610342565b6040516001600160401b0390911681526020015b60405180910390f35b61014d610148366004611b7d565b610354565b005b61014d61015d366004611b7d565b610411565b61014d610170366004611be1565b610476565b61014d610183366004611c4b565b610538565b61014d610196366004611cb8565b6109d9565b61014d6101a9366004611cd1565b610ab8565b6101c16101bc366004611cf9565b610c7b565b6040519015158152602001610131565b6102246101df366004611d2b565b5f60208190529081526040902080546001909101546001600160401b038082169163ffffffff600160401b8204169160ff600160601b83041691600160681b90041685565b604051610131959493929190611d56565b610248610243366004611dc6565b610ccb565b604051908152602001610131565b61027d7f000000000000000000000000000000000000000000000000000000000000000081565b6040516001600160a01b039091168152602001610131565b61011d7f000000000000000000000000000000000000000000000000000000000000000081565b61014d6102ca366004611b7d565b610d47565b60015461011d906001600160401b031681565b6102486102f0366004611e28565b610e14565b61014d610303366004611e59565b610e5e565b61027d610316366004611d2b565b610ee4565b61027d7f000000000000000000000000000000000000000000000000000000000000000081565b6103516001600160381b611edc565b81565b5f61035f3383610e14565b5f81815260208190526040902090915060026001820154600160601b900460ff16600281111561039157610391611d42565b146103af57604051634dccf59f60e01b815260040160405180910390fd5b6001810154600160681b90046001600160401b031642101561040057600181015460405163be46066f60e01b8152600160681b9091046001600160401b031660048201526024015b60405180910390fd5b61040c82338584610fb6565b505050565b5f61041c8233610e14565b5f8181526020819052604081209192506001820154600160601b900460ff16600281111561044c5761044c611d42565b0361046a57604051636a310f6960e11b815260040160405180910390fd5b61040c82843384610fb6565b6040831461049a576040516317ab7d5d60e11b8152600481018490526024016103f7565b5f84846040516104ab929190611efb565b60405190819003902090506001600160a01b03811633146104ea5760405163117c4c3b60e01b81526001600160a01b03821660048201526024016103f7565b336001600160a01b03167f5df480f8854903a456738589684a9c046d81dbba3e9cb83d5f6f1bbf3f1cba32868686866040516105299493929190611f32565b60405180910390a25050505050565b6105428333610e14565b82351461056257604051630a45967760e11b815260040160405180910390fd5b81355f908152602081905260408120906001820154600160601b900460ff16600281111561059257610592611d42565b036105b057604051636a310f6960e11b815260040160405180910390fd5b6001810154600160401b900463ffffffff166105d26080850160608601611f63565b63ffffffff1614610624576105ed6080840160608501611f63565b6001820154604051630577b34360e41b815263ffffffff9283166004820152600160401b90910490911660248201526044016103f7565b60018101546001600160401b03166106426060850160408601611cb8565b6001600160401b031611610691576106606060840160408501611cb8565b60018201546040516304673c8d60e01b81526001600160401b039283166004820152911660248201526044016103f7565b8054602084013511156106c7578054604051639ae6346160e01b81526020850135600482015260248101919091526044016103f7565b6106d66001600160381b611edc565b6001600160401b03166106ef60a0850160808601611cb8565b6001600160401b031611156107335761070e60a0840160808501611cb8565b60405163ea7c080160e01b81526001600160401b0390911660048201526024016103f7565b5f61077e8435602086013561074e6060880160408901611cb8565b61075e6080890160608a01611f63565b61076e60a08a0160808b01611cb8565b61024360c08b0160a08c01611b7d565b90505f5f6107cd6107bb847f19457468657265756d205369676e6564204d6573736167653a0a3332000000005f908152601c91909152603c902090565b6107c860c0890189611f7c565b61101f565b5090925090505f8160038111156107e6576107e6611d42565b1461080457604051638baa579f60e01b815260040160405180910390fd5b866001600160a01b0316826001600160a01b0316146108415760405163576d4a5d60e01b81526001600160a01b03831660048201526024016103f7565b5f61084b86610ee4565b905061085d60c0880160a08901611b7d565b6001600160a01b0316816001600160a01b0316146108b25761088560c0880160a08901611b7d565b60405163bb9b9a6760e01b81526001600160a01b03918216600482015290821660248201526044016103f7565b6108c784876101bc60a08b0160808c01611cb8565b6108e457604051630554a83160e31b815260040160405180910390fd5b8660200135855f015f8282546108fa9190611fbe565b9091555061091090506060880160408901611cb8565b60018601805467ffffffffffffffff19166001600160401b039290921691909117905586357f71b292a5aad928ec294a31caffb87121cbb3b4e699eb244c2be94fcc3737767661096660608a0160408b01611cb8565b604080516001600160401b0390921682526020808c0135908301520160405180910390a26109978735893388611066565b6109cf6001600160a01b037f0000000000000000000000000000000000000000000000000000000000000000163360208a0135611126565b5050505050505050565b336001600160a01b037f00000000000000000000000000000000000000000000000000000000000000001614610a22576040516330cd747160e01b815260040160405180910390fd5b610a316001600160381b611edc565b6001600160401b0316816001600160401b03161115610a6e5760405163ea7c080160e01b81526001600160401b03821660048201526024016103f7565b6001805467ffffffffffffffff19166001600160401b0383169081179091556040517f07dba1554f142301abdb3e04cc985a8cda14d53663fec4858c56c1dc927518ba905f90a250565b6001600160a01b038216610adf5760405163d92e233d60e01b815260040160405180910390fd5b336001600160a01b03831603610b085760405163163b4bef60e21b815260040160405180910390fd5b805f03610b2857604051631f2a200560e01b815260040160405180910390fd5b5f610b333384610e14565b5f81815260208190526040902090915060026001820154600160601b900460ff166002811115610b6557610b65611d42565b03610b835760405163a794c1ef60e01b815260040160405180910390fd5b5f6001820154600160601b900460ff166002811115610ba457610ba4611d42565b03610c1c576001818101805460ff60601b1916600160601b17808255600890610bdb908490600160401b900463ffffffff16611fd1565b825463ffffffff9182166101009390930a92830291909202199091161790555060018101805474ffffffffffffffff0000000000ffffffffffffffff191690555b82815f015f828254610c2e9190611fed565b90915550610c40905082338684611066565b610c756001600160a01b037f00000000000000000000000000000000000000000000000000000000000000001633308661115b565b50505050565b5f5f60c88585604051602001610c9b929190918252602082015260400190565b60408051601f1981840301815291905280516020909101206001600160401b038516911c11159150509392505050565b60408051466020820152309181019190915260608101879052608081018690526001600160401b0380861660a083015263ffffffff851660c0830152831660e08201526001600160a01b0382166101008201525f90610120016040516020818303038152906040528051906020012090505b9695505050505050565b5f610d523383610e14565b5f818152602081905260409020909150600180820154600160601b900460ff166002811115610d8357610d83611d42565b14610da157604051636a310f6960e11b815260040160405180910390fd5b60018101805460ff60601b1916600160611b179055610de07f000000000000000000000000000000000000000000000000000000000000000042612000565b81600101600d6101000a8154816001600160401b0302191690836001600160401b0316021790555061040c82338584611066565b6040516bffffffffffffffffffffffff19606084811b8216602084015283901b1660348201525f906048016040516020818303038152906040528051906020012090505b92915050565b5f805b82811015610ea957610e95848483818110610e7e57610e7e61201f565b9050602002810190610e909190612033565b611191565b610e9f9083611fed565b9150600101610e61565b50801561040c5761040c6001600160a01b037f0000000000000000000000000000000000000000000000000000000000000000163383611126565b5f81801580610f05575070014551231950b75fc4402da1732fc9bebe198110155b15610f235760405163c715138d60e01b815260040160405180910390fd5b60015f601b5f51602061217c5f395f51905f5270014551231950b75fc4402da1732fc9bebe195f51602061217c5f395f51905f528609604080515f8152602081018083529590955260ff909316928401929092526060830152608082015260a0016020604051602081039080840390855afa158015610fa4573d5f5f3e3d5ffd5b5050604051601f190151949350505050565b80545f825560018201805468ffffffffffffffffff60601b19169055610fde85858585611066565b8015611018576110186001600160a01b037f0000000000000000000000000000000000000000000000000000000000000000168583611126565b5050505050565b5f80806041849003611053578435602086013560408701355f1a611045898285856114cf565b95509550955050505061105d565b505f915060029050825b93509350939050565b805460018201546001600160a01b03848116929086169187917fe917884702a20c5718074fca2637e77badaeb5e89c723369fd46f87b86dac671916001600160401b03811690600160401b810463ffffffff1690600160601b900460ff1660028111156110d5576110d5611d42565b6001890154604080519586526001600160401b03948516602087015263ffffffff9093169285019290925260ff166060840152600160681b900416608082015260a00160405180910390a450505050565b6111338383836001611597565b61040c57604051635274afe760e01b81526001600160a01b03841660048201526024016103f7565b6111698484848460016115f9565b610c7557604051635274afe760e01b81526001600160a01b03851660048201526024016103f7565b5f813536826111a36060860186612051565b90925090506111c16111bb6040870160208801611b7d565b33610e14565b8314611209576040805160048152602481019091526020810180516001600160e01b0316630a45967760e11b1790526111ff90849084908490611666565b505f949350505050565b5f838152602081905260408120906001820154600160601b900460ff16600281111561123757611237611d42565b0361127f576040805160048152602481019091526020810180516001600160e01b0316636a310f6960e11b17905261127490859085908590611666565b505f95945050505050565b6001810154600160401b900463ffffffff166112a16060880160408901611f63565b63ffffffff161461132957611274848484630577b34360e41b6112ca60608c0160408d01611f63565b600187015460405163ffffffff9283166024820152600160401b909104909116604482015260640160408051601f198184030181529190526020810180516001600160e01b03166001600160e01b031990931692909217909152611666565b80545f61133c6040890160208a01611b7d565b90505f61134f60608a0160408b01611f63565b60018501549091506001600160401b0316805f5b8781101561146b575f89898381811061137e5761137e61201f565b905060e002018036038101906113949190612095565b90505f6113a58c888885888d6116db565b905080515f146113f4578b7f93e4e672e7d2c4b61948797ffb84e05bb75a705a25aa32ec05551617e687756e8360200151836040516113e5929190612136565b60405180910390a25050611463565b81516114009089611fbe565b825190985061140f908e611fed565b6020838101518451604080516001600160401b038416815293840191909152929f5095508d917f71b292a5aad928ec294a31caffb87121cbb3b4e699eb244c2be94fcc37377676910160405180910390a250505b600101611363565b50816001600160401b0316816001600160401b0316146114c15784865560018601805467ffffffffffffffff19166001600160401b0383161790556114c1896114ba60408e0160208f01611b7d565b3389611066565b505050505050505050919050565b5f80807f7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a084111561150857505f9150600390508261158d565b604080515f808252602082018084528a905260ff891692820192909252606081018790526080810186905260019060a0016020604051602081039080840390855afa158015611559573d5f5f3e3d5ffd5b5050604051601f1901519150506001600160a01b03811661158457505f92506001915082905061158d565b92505f91508190505b9450945094915050565b60405163a9059cbb60e01b5f8181526001600160a01b038616600452602485905291602083604481808b5af1925060015f511483166115ed5783831516156115e1573d5f823e3d81fd5b5f873b113d1516831692505b60405250949350505050565b6040516323b872dd60e01b5f8181526001600160a01b038781166004528616602452604485905291602083606481808c5af1925060015f51148316611655578383151615611649573d5f823e3d81fd5b5f883b113d1516831692505b604052505f60605295945050505050565b5f5b8281101561101857847f93e4e672e7d2c4b61948797ffb84e05bb75a705a25aa32ec05551617e687756e8585848181106116a4576116a461201f565b905060e0020160200160208101906116bc9190611cb8565b846040516116cb929190612136565b60405180910390a2600101611668565b6060826001600160401b031684602001516001600160401b0316116117605760208401516040516001600160401b03918216602482015290841660448201526304673c8d60e01b906064015b60408051601f198184030181529190526020810180516001600160e01b03166001600160e01b0319909316929092179091529050610d3d565b835182101561178e578351604051639ae6346160e01b91611727918590602401918252602082015260400190565b61179d6001600160381b611edc565b6001600160401b031684604001516001600160401b031611156117e35760408481015190516001600160401b03909116602482015263ea7c080160e01b90604401611727565b5f61185288865f015187602001518989604001518a60600151604080514681523060208201529081019690965260608601949094526001600160401b03928316608086015263ffffffff9190911660a08501521660c08301526001600160a01b031660e0820152610100902090565b90505f5f61189e61188f847f19457468657265756d205369676e6564204d6573736167653a0a3332000000005f908152601c91909152603c902090565b88608001518960a00151611b30565b5090925090505f8160038111156118b7576118b7611d42565b146118f05750506040805160048152602481019091526020810180516001600160e01b0316638baa579f60e01b1790529150610d3d9050565b886001600160a01b0316826001600160a01b0316146119575750604080516001600160a01b039290921660248084019190915281518084039091018152604490920190526020810180516001600160e01b031663576d4a5d60e01b1790529150610d3d9050565b60c087015180158061197b575070014551231950b75fc4402da1732fc9bebe198110155b156119b55750506040805160048152602481019091526020810180516001600160e01b031663c715138d60e01b1790529250610d3d915050565b5f600181601b5f51602061217c5f395f51905f5270014551231950b75fc4402da1732fc9bebe195f51602061217c5f395f51905f528709604080515f8152602081018083529590955260ff909316928401929092526060830152608082015260a0016020604051602081039080840390855afa158015611a37573d5f5f3e3d5ffd5b50505060206040510351905088606001516001600160a01b0316816001600160a01b031614611abd576060890151604080516001600160a01b0392831660248201529290911660448084019190915281518084039091018152606490920190526020810180516001600160e01b031663bb9b9a6760e01b1790529450610d3d9350505050565b60c08901516040808b01515f88815260209390935291206001600160401b0390911660c89190911c1115611b215750506040805160048152602481019091526020810180516001600160e01b0316630554a83160e31b1790529350610d3d92505050565b50505050509695505050505050565b5f80806001600160ff1b038416601b60ff86901c01611b51888289856114cf565b945094509450505093509350939050565b80356001600160a01b0381168114611b78575f5ffd5b919050565b5f60208284031215611b8d575f5ffd5b611b9682611b62565b9392505050565b5f5f83601f840112611bad575f5ffd5b5081356001600160401b03811115611bc3575f5ffd5b602083019150836020828501011115611bda575f5ffd5b9250929050565b5f5f5f5f60408587031215611bf4575f5ffd5b84356001600160401b03811115611c09575f5ffd5b611c1587828801611b9d565b90955093505060208501356001600160401b03811115611c33575f5ffd5b611c3f87828801611b9d565b95989497509550505050565b5f5f5f60608486031215611c5d575f5ffd5b611c6684611b62565b925060208401356001600160401b03811115611c80575f5ffd5b840160e08187031215611c91575f5ffd5b929592945050506040919091013590565b80356001600160401b0381168114611b78575f5ffd5b5f60208284031215611cc8575f5ffd5b611b9682611ca2565b5f5f60408385031215611ce2575f5ffd5b611ceb83611b62565b946020939093013593505050565b5f5f5f60608486031215611d0b575f5ffd5b8335925060208401359150611d2260408501611ca2565b90509250925092565b5f60208284031215611d3b575f5ffd5b5035919050565b634e487b7160e01b5f52602160045260245ffd5b8581526001600160401b038516602082015263ffffffff8416604082015260a0810160038410611d9457634e487b7160e01b5f52602160045260245ffd5b8360608301526001600160401b03831660808301529695505050505050565b803563ffffffff81168114611b78575f5ffd5b5f5f5f5f5f5f60c08789031215611ddb575f5ffd5b8635955060208701359450611df260408801611ca2565b9350611e0060608801611db3565b9250611e0e60808801611ca2565b9150611e1c60a08801611b62565b90509295509295509295565b5f5f60408385031215611e39575f5ffd5b611e4283611b62565b9150611e5060208401611b62565b90509250929050565b5f5f60208385031215611e6a575f5ffd5b82356001600160401b03811115611e7f575f5ffd5b8301601f81018513611e8f575f5ffd5b80356001600160401b03811115611ea4575f5ffd5b8560208260051b8401011115611eb8575f5ffd5b6020919091019590945092505050565b634e487b7160e01b5f52601160045260245ffd5b6001600160401b038281168282160390811115610e5857610e58611ec8565b818382375f9101908152919050565b81835281816020850137505f828201602090810191909152601f909101601f19169091010190565b604081525f611f45604083018688611f0a565b8281036020840152611f58818587611f0a565b979650505050505050565b5f60208284031215611f73575f5ffd5b611b9682611db3565b5f5f8335601e19843603018112611f91575f5ffd5b8301803591506001600160401b03821115611faa575f5ffd5b602001915036819003821315611bda575f5ffd5b81810381811115610e5857610e58611ec8565b63ffffffff8181168382160190811115610e5857610e58611ec8565b80820180821115610e5857610e58611ec8565b6001600160401b038181168382160190811115610e5857610e58611ec8565b634e487b7160e01b5f52603260045260245ffd5b5f8235607e19833603018112612047575f5ffd5b9190910192915050565b5f5f8335601e19843603018112612066575f5ffd5b8301803591506001600160401b0382111561207f575f5ffd5b602001915060e081023603821315611bda575f5ffd5b5f60e08284031280156120a6575f5ffd5b5060405160e081016001600160401b03811182821017156120d557634e487b7160e01b5f52604160045260245ffd5b604052823581526120e860208401611ca2565b60208201526120f960408401611ca2565b604082015261210a60608401611b62565b60608201526080838101359082015260a0808401359082015260c0928301359281019290925250919050565b6001600160401b0383168152604060208201525f82518060408401528060208501606085015e5f606082850101526060601f19601f830116840101915050939250505056fe79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798a2646970667358221220897d643e22d3f5cb1fb1afef603f7b4b7d76023b93173d4c3898d3aeaa3df65d64736f6c63430008250033",
}

// RelayChannels is an auto generated Go binding around an Ethereum contract.
type RelayChannels struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *RelayChannels) GetABI() abi.ABI {
	return c.abi
}

// NewRelayChannels creates a new instance of RelayChannels.
func NewRelayChannels() *RelayChannels {
	parsed, err := RelayChannelsMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &RelayChannels{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *RelayChannels) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(address token_, uint64 closurePeriodSeconds, uint64 minWinProb_) returns()
func (relayChannels *RelayChannels) PackConstructor(token_ common.Address, closurePeriodSeconds uint64, minWinProb_ uint64) []byte {
	enc, err := relayChannels.abi.Pack("", token_, closurePeriodSeconds, minWinProb_)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackMAXWINPROB is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x033aad26.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function MAX_WIN_PROB() view returns(uint64)
func (relayChannels *RelayChannels) PackMAXWINPROB() []byte {
	enc, err := relayChannels.abi.Pack("MAX_WIN_PROB")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMAXWINPROB is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x033aad26.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function MAX_WIN_PROB() view returns(uint64)
func (relayChannels *RelayChannels) TryPackMAXWINPROB() ([]byte, error) {
	return relayChannels.abi.Pack("MAX_WIN_PROB")
}

// UnpackMAXWINPROB is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x033aad26.
//
// Solidity: function MAX_WIN_PROB() view returns(uint64)
func (relayChannels *RelayChannels) UnpackMAXWINPROB(data []byte) (uint64, error) {
	out, err := relayChannels.abi.Unpack("MAX_WIN_PROB", data)
	if err != nil {
		return *new(uint64), err
	}
	out0 := *abi.ConvertType(out[0], new(uint64)).(*uint64)
	return out0, nil
}

// PackAnnounce is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x28f7fd78.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function announce(bytes publicKey, bytes multiaddr) returns()
func (relayChannels *RelayChannels) PackAnnounce(publicKey []byte, multiaddr []byte) []byte {
	enc, err := relayChannels.abi.Pack("announce", publicKey, multiaddr)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAnnounce is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x28f7fd78.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function announce(bytes publicKey, bytes multiaddr) returns()
func (relayChannels *RelayChannels) TryPackAnnounce(publicKey []byte, multiaddr []byte) ([]byte, error) {
	return relayChannels.abi.Pack("announce", publicKey, multiaddr)
}

// PackChallengeOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xee9e9c4b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function challengeOf(bytes32 response) pure returns(address)
func (relayChannels *RelayChannels) PackChallengeOf(response [32]byte) []byte {
	enc, err := relayChannels.abi.Pack("challengeOf", response)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackChallengeOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xee9e9c4b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function challengeOf(bytes32 response) pure returns(address)
func (relayChannels *RelayChannels) TryPackChallengeOf(response [32]byte) ([]byte, error) {
	return relayChannels.abi.Pack("challengeOf", response)
}

// UnpackChallengeOf is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xee9e9c4b.
//
// Solidity: function challengeOf(bytes32 response) pure returns(address)
func (relayChannels *RelayChannels) UnpackChallengeOf(data []byte) (common.Address, error) {
	out, err := relayChannels.abi.Unpack("challengeOf", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackChannelIdOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd2e51673.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function channelIdOf(address source, address destination) pure returns(bytes32)
func (relayChannels *RelayChannels) PackChannelIdOf(source common.Address, destination common.Address) []byte {
	enc, err := relayChannels.abi.Pack("channelIdOf", source, destination)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackChannelIdOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd2e51673.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function channelIdOf(address source, address destination) pure returns(bytes32)
func (relayChannels *RelayChannels) TryPackChannelIdOf(source common.Address, destination common.Address) ([]byte, error) {
	return relayChannels.abi.Pack("channelIdOf", source, destination)
}

// UnpackChannelIdOf is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xd2e51673.
//
// Solidity: function channelIdOf(address source, address destination) pure returns(bytes32)
func (relayChannels *RelayChannels) UnpackChannelIdOf(data []byte) ([32]byte, error) {
	out, err := relayChannels.abi.Unpack("channelIdOf", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackChannels is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7a7ebd7b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function channels(bytes32 channelId) view returns(uint256 balance, uint64 ticketIndex, uint32 epoch, uint8 status, uint64 closureTime)
func (relayChannels *RelayChannels) PackChannels(channelId [32]byte) []byte {
	enc, err := relayChannels.abi.Pack("channels", channelId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackChannels is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7a7ebd7b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function channels(bytes32 channelId) view returns(uint256 balance, uint64 ticketIndex, uint32 epoch, uint8 status, uint64 closureTime)
func (relayChannels *RelayChannels) TryPackChannels(channelId [32]byte) ([]byte, error) {
	return relayChannels.abi.Pack("channels", channelId)
}

// ChannelsOutput serves as a container for the return parameters of contract
// method Channels.
type ChannelsOutput struct {
	Balance     *big.Int
	TicketIndex uint64
	Epoch       uint32
	Status      uint8
	ClosureTime uint64
}

// UnpackChannels is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x7a7ebd7b.
//
// Solidity: function channels(bytes32 channelId) view returns(uint256 balance, uint64 ticketIndex, uint32 epoch, uint8 status, uint64 closureTime)
func (relayChannels *RelayChannels) UnpackChannels(data []byte) (ChannelsOutput, error) {
	out, err := relayChannels.abi.Unpack("channels", data)
	outstruct := new(ChannelsOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Balance = abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	outstruct.TicketIndex = *abi.ConvertType(out[1], new(uint64)).(*uint64)
	outstruct.Epoch = *abi.ConvertType(out[2], new(uint32)).(*uint32)
	outstruct.Status = *abi.ConvertType(out[3], new(uint8)).(*uint8)
	outstruct.ClosureTime = *abi.ConvertType(out[4], new(uint64)).(*uint64)
	return *outstruct, nil
}

// PackCloseIncomingChannel is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1a7ffe7a.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function closeIncomingChannel(address source) returns()
func (relayChannels *RelayChannels) PackCloseIncomingChannel(source common.Address) []byte {
	enc, err := relayChannels.abi.Pack("closeIncomingChannel", source)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCloseIncomingChannel is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1a7ffe7a.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function closeIncomingChannel(address source) returns()
func (relayChannels *RelayChannels) TryPackCloseIncomingChannel(source common.Address) ([]byte, error) {
	return relayChannels.abi.Pack("closeIncomingChannel", source)
}

// PackClosurePeriod is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x92e38029.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function closurePeriod() view returns(uint64)
func (relayChannels *RelayChannels) PackClosurePeriod() []byte {
	enc, err := relayChannels.abi.Pack("closurePeriod")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackClosurePeriod is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x92e38029.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function closurePeriod() view returns(uint64)
func (relayChannels *RelayChannels) TryPackClosurePeriod() ([]byte, error) {
	return relayChannels.abi.Pack("closurePeriod")
}

// UnpackClosurePeriod is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x92e38029.
//
// Solidity: function closurePeriod() view returns(uint64)
func (relayChannels *RelayChannels) UnpackClosurePeriod(data []byte) (uint64, error) {
	out, err := relayChannels.abi.Unpack("closurePeriod", data)
	if err != nil {
		return *new(uint64), err
	}
	out0 := *abi.ConvertType(out[0], new(uint64)).(*uint64)
	return out0, nil
}

// PackFinalizeChannelClosure is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x075e389f.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function finalizeChannelClosure(address destination) returns()
func (relayChannels *RelayChannels) PackFinalizeChannelClosure(destination common.Address) []byte {
	enc, err := relayChannels.abi.Pack("finalizeChannelClosure", destination)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackFinalizeChannelClosure is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x075e389f.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function finalizeChannelClosure(address destination) returns()
func (relayChannels *RelayChannels) TryPackFinalizeChannelClosure(destination common.Address) ([]byte, error) {
	return relayChannels.abi.Pack("finalizeChannelClosure", destination)
}

// PackFundChannel is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5c87beb4.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function fundChannel(address destination, uint256 amount) returns()
func (relayChannels *RelayChannels) PackFundChannel(destination common.Address, amount *big.Int) []byte {
	enc, err := relayChannels.abi.Pack("fundChannel", destination, amount)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackFundChannel is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5c87beb4.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function fundChannel(address destination, uint256 amount) returns()
func (relayChannels *RelayChannels) TryPackFundChannel(destination common.Address, amount *big.Int) ([]byte, error) {
	return relayChannels.abi.Pack("fundChannel", destination, amount)
}

// PackInitiateChannelClosure is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb4037e80.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function initiateChannelClosure(address destination) returns()
func (relayChannels *RelayChannels) PackInitiateChannelClosure(destination common.Address) []byte {
	enc, err := relayChannels.abi.Pack("initiateChannelClosure", destination)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackInitiateChannelClosure is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb4037e80.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function initiateChannelClosure(address destination) returns()
func (relayChannels *RelayChannels) TryPackInitiateChannelClosure(destination common.Address) ([]byte, error) {
	return relayChannels.abi.Pack("initiateChannelClosure", destination)
}

// PackIsWinning is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x665a055e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function isWinning(bytes32 hash, bytes32 response, uint64 winProb) pure returns(bool)
func (relayChannels *RelayChannels) PackIsWinning(hash [32]byte, response [32]byte, winProb uint64) []byte {
	enc, err := relayChannels.abi.Pack("isWinning", hash, response, winProb)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackIsWinning is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x665a055e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function isWinning(bytes32 hash, bytes32 response, uint64 winProb) pure returns(bool)
func (relayChannels *RelayChannels) TryPackIsWinning(hash [32]byte, response [32]byte, winProb uint64) ([]byte, error) {
	return relayChannels.abi.Pack("isWinning", hash, response, winProb)
}

// UnpackIsWinning is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x665a055e.
//
// Solidity: function isWinning(bytes32 hash, bytes32 response, uint64 winProb) pure returns(bool)
func (relayChannels *RelayChannels) UnpackIsWinning(data []byte) (bool, error) {
	out, err := relayChannels.abi.Unpack("isWinning", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackMinWinProb is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd0926cbc.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function minWinProb() view returns(uint64)
func (relayChannels *RelayChannels) PackMinWinProb() []byte {
	enc, err := relayChannels.abi.Pack("minWinProb")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMinWinProb is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd0926cbc.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function minWinProb() view returns(uint64)
func (relayChannels *RelayChannels) TryPackMinWinProb() ([]byte, error) {
	return relayChannels.abi.Pack("minWinProb")
}

// UnpackMinWinProb is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xd0926cbc.
//
// Solidity: function minWinProb() view returns(uint64)
func (relayChannels *RelayChannels) UnpackMinWinProb(data []byte) (uint64, error) {
	out, err := relayChannels.abi.Unpack("minWinProb", data)
	if err != nil {
		return *new(uint64), err
	}
	out0 := *abi.ConvertType(out[0], new(uint64)).(*uint64)
	return out0, nil
}

// PackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function owner() view returns(address)
func (relayChannels *RelayChannels) PackOwner() []byte {
	enc, err := relayChannels.abi.Pack("owner")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function owner() view returns(address)
func (relayChannels *RelayChannels) TryPackOwner() ([]byte, error) {
	return relayChannels.abi.Pack("owner")
}

// UnpackOwner is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x8da5cb5b.
//
// Solidity: function owner() view returns(address)
func (relayChannels *RelayChannels) UnpackOwner(data []byte) (common.Address, error) {
	out, err := relayChannels.abi.Unpack("owner", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackRedeemTicket is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5a4ad35e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function redeemTicket(address source, (bytes32,uint256,uint64,uint32,uint64,address,bytes) ticket, bytes32 response) returns()
func (relayChannels *RelayChannels) PackRedeemTicket(source common.Address, ticket RelayChannelsTicket, response [32]byte) []byte {
	enc, err := relayChannels.abi.Pack("redeemTicket", source, ticket, response)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRedeemTicket is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5a4ad35e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function redeemTicket(address source, (bytes32,uint256,uint64,uint32,uint64,address,bytes) ticket, bytes32 response) returns()
func (relayChannels *RelayChannels) TryPackRedeemTicket(source common.Address, ticket RelayChannelsTicket, response [32]byte) ([]byte, error) {
	return relayChannels.abi.Pack("redeemTicket", source, ticket, response)
}

// PackRedeemTickets is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe8592f1a.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function redeemTickets((bytes32,address,uint32,(uint256,uint64,uint64,address,bytes32,bytes32,bytes32)[])[] groups) returns()
func (relayChannels *RelayChannels) PackRedeemTickets(groups []RelayChannelsChannelTickets) []byte {
	enc, err := relayChannels.abi.Pack("redeemTickets", groups)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRedeemTickets is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe8592f1a.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function redeemTickets((bytes32,address,uint32,(uint256,uint64,uint64,address,bytes32,bytes32,bytes32)[])[] groups) returns()
func (relayChannels *RelayChannels) TryPackRedeemTickets(groups []RelayChannelsChannelTickets) ([]byte, error) {
	return relayChannels.abi.Pack("redeemTickets", groups)
}

// PackSetMinWinProb is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5b85b19a.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setMinWinProb(uint64 minWinProb_) returns()
func (relayChannels *RelayChannels) PackSetMinWinProb(minWinProb uint64) []byte {
	enc, err := relayChannels.abi.Pack("setMinWinProb", minWinProb)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetMinWinProb is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5b85b19a.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setMinWinProb(uint64 minWinProb_) returns()
func (relayChannels *RelayChannels) TryPackSetMinWinProb(minWinProb uint64) ([]byte, error) {
	return relayChannels.abi.Pack("setMinWinProb", minWinProb)
}

// PackTicketHash is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7d923aeb.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function ticketHash(bytes32 channelId, uint256 amount, uint64 index, uint32 epoch, uint64 winProb, address challenge) view returns(bytes32)
func (relayChannels *RelayChannels) PackTicketHash(channelId [32]byte, amount *big.Int, index uint64, epoch uint32, winProb uint64, challenge common.Address) []byte {
	enc, err := relayChannels.abi.Pack("ticketHash", channelId, amount, index, epoch, winProb, challenge)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTicketHash is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7d923aeb.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function ticketHash(bytes32 channelId, uint256 amount, uint64 index, uint32 epoch, uint64 winProb, address challenge) view returns(bytes32)
func (relayChannels *RelayChannels) TryPackTicketHash(channelId [32]byte, amount *big.Int, index uint64, epoch uint32, winProb uint64, challenge common.Address) ([]byte, error) {
	return relayChannels.abi.Pack("ticketHash", channelId, amount, index, epoch, winProb, challenge)
}

// UnpackTicketHash is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x7d923aeb.
//
// Solidity: function ticketHash(bytes32 channelId, uint256 amount, uint64 index, uint32 epoch, uint64 winProb, address challenge) view returns(bytes32)
func (relayChannels *RelayChannels) UnpackTicketHash(data []byte) ([32]byte, error) {
	out, err := relayChannels.abi.Unpack("ticketHash", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackToken is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xfc0c546a.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function token() view returns(address)
func (relayChannels *RelayChannels) PackToken() []byte {
	enc, err := relayChannels.abi.Pack("token")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackToken is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xfc0c546a.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function token() view returns(address)
func (relayChannels *RelayChannels) TryPackToken() ([]byte, error) {
	return relayChannels.abi.Pack("token")
}

// UnpackToken is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xfc0c546a.
//
// Solidity: function token() view returns(address)
func (relayChannels *RelayChannels) UnpackToken(data []byte) (common.Address, error) {
	out, err := relayChannels.abi.Unpack("token", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// RelayChannelsAnnouncement represents a Announcement event raised by the RelayChannels contract.
type RelayChannelsAnnouncement struct {
	Account   common.Address
	PublicKey []byte
	Multiaddr []byte
	Raw       *types.Log // Blockchain specific contextual infos
}

const RelayChannelsAnnouncementEventName = "Announcement"

// ContractEventName returns the user-defined event name.
func (RelayChannelsAnnouncement) ContractEventName() string {
	return RelayChannelsAnnouncementEventName
}

// UnpackAnnouncementEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Announcement(address indexed account, bytes publicKey, bytes multiaddr)
func (relayChannels *RelayChannels) UnpackAnnouncementEvent(log *types.Log) (*RelayChannelsAnnouncement, error) {
	event := "Announcement"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != relayChannels.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(RelayChannelsAnnouncement)
	if len(log.Data) > 0 {
		if err := relayChannels.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range relayChannels.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// RelayChannelsChannelUpdated represents a ChannelUpdated event raised by the RelayChannels contract.
type RelayChannelsChannelUpdated struct {
	ChannelId   [32]byte
	Source      common.Address
	Destination common.Address
	Balance     *big.Int
	TicketIndex uint64
	Epoch       uint32
	Status      uint8
	ClosureTime uint64
	Raw         *types.Log // Blockchain specific contextual infos
}

const RelayChannelsChannelUpdatedEventName = "ChannelUpdated"

// ContractEventName returns the user-defined event name.
func (RelayChannelsChannelUpdated) ContractEventName() string {
	return RelayChannelsChannelUpdatedEventName
}

// UnpackChannelUpdatedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event ChannelUpdated(bytes32 indexed channelId, address indexed source, address indexed destination, uint256 balance, uint64 ticketIndex, uint32 epoch, uint8 status, uint64 closureTime)
func (relayChannels *RelayChannels) UnpackChannelUpdatedEvent(log *types.Log) (*RelayChannelsChannelUpdated, error) {
	event := "ChannelUpdated"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != relayChannels.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(RelayChannelsChannelUpdated)
	if len(log.Data) > 0 {
		if err := relayChannels.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range relayChannels.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// RelayChannelsMinWinProbUpdated represents a MinWinProbUpdated event raised by the RelayChannels contract.
type RelayChannelsMinWinProbUpdated struct {
	MinWinProb uint64
	Raw        *types.Log // Blockchain specific contextual infos
}

const RelayChannelsMinWinProbUpdatedEventName = "MinWinProbUpdated"

// ContractEventName returns the user-defined event name.
func (RelayChannelsMinWinProbUpdated) ContractEventName() string {
	return RelayChannelsMinWinProbUpdatedEventName
}

// UnpackMinWinProbUpdatedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event MinWinProbUpdated(uint64 indexed minWinProb)
func (relayChannels *RelayChannels) UnpackMinWinProbUpdatedEvent(log *types.Log) (*RelayChannelsMinWinProbUpdated, error) {
	event := "MinWinProbUpdated"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != relayChannels.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(RelayChannelsMinWinProbUpdated)
	if len(log.Data) > 0 {
		if err := relayChannels.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range relayChannels.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// RelayChannelsTicketRedeemed represents a TicketRedeemed event raised by the RelayChannels contract.
type RelayChannelsTicketRedeemed struct {
	ChannelId [32]byte
	Index     uint64
	Amount    *big.Int
	Raw       *types.Log // Blockchain specific contextual infos
}

const RelayChannelsTicketRedeemedEventName = "TicketRedeemed"

// ContractEventName returns the user-defined event name.
func (RelayChannelsTicketRedeemed) ContractEventName() string {
	return RelayChannelsTicketRedeemedEventName
}

// UnpackTicketRedeemedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event TicketRedeemed(bytes32 indexed channelId, uint64 index, uint256 amount)
func (relayChannels *RelayChannels) UnpackTicketRedeemedEvent(log *types.Log) (*RelayChannelsTicketRedeemed, error) {
	event := "TicketRedeemed"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != relayChannels.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(RelayChannelsTicketRedeemed)
	if len(log.Data) > 0 {
		if err := relayChannels.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range relayChannels.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// RelayChannelsTicketRejected represents a TicketRejected event raised by the RelayChannels contract.
type RelayChannelsTicketRejected struct {
	ChannelId [32]byte
	Index     uint64
	Reason    []byte
	Raw       *types.Log // Blockchain specific contextual infos
}

const RelayChannelsTicketRejectedEventName = "TicketRejected"

// ContractEventName returns the user-defined event name.
func (RelayChannelsTicketRejected) ContractEventName() string {
	return RelayChannelsTicketRejectedEventName
}

// UnpackTicketRejectedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event TicketRejected(bytes32 indexed channelId, uint64 index, bytes reason)
func (relayChannels *RelayChannels) UnpackTicketRejectedEvent(log *types.Log) (*RelayChannelsTicketRejected, error) {
	event := "TicketRejected"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != relayChannels.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(RelayChannelsTicketRejected)
	if len(log.Data) > 0 {
		if err := relayChannels.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range relayChannels.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// UnpackError attempts to decode the provided error data using user-defined
// error definitions.
func (relayChannels *RelayChannels) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["ChallengeMismatch"].ID.Bytes()[:4]) {
		return relayChannels.UnpackChallengeMismatchError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["ChannelNotOpen"].ID.Bytes()[:4]) {
		return relayChannels.UnpackChannelNotOpenError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["ChannelNotPendingToClose"].ID.Bytes()[:4]) {
		return relayChannels.UnpackChannelNotPendingToCloseError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["ChannelPendingToClose"].ID.Bytes()[:4]) {
		return relayChannels.UnpackChannelPendingToCloseError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["ClosureTimeNotReached"].ID.Bytes()[:4]) {
		return relayChannels.UnpackClosureTimeNotReachedError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["EpochMismatch"].ID.Bytes()[:4]) {
		return relayChannels.UnpackEpochMismatchError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["IndexNotIncreasing"].ID.Bytes()[:4]) {
		return relayChannels.UnpackIndexNotIncreasingError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["InsufficientChannelBalance"].ID.Bytes()[:4]) {
		return relayChannels.UnpackInsufficientChannelBalanceError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["InvalidPublicKeyLength"].ID.Bytes()[:4]) {
		return relayChannels.UnpackInvalidPublicKeyLengthError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["InvalidResponse"].ID.Bytes()[:4]) {
		return relayChannels.UnpackInvalidResponseError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["InvalidSignature"].ID.Bytes()[:4]) {
		return relayChannels.UnpackInvalidSignatureError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["InvalidWinProb"].ID.Bytes()[:4]) {
		return relayChannels.UnpackInvalidWinProbError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["NotChannelDestination"].ID.Bytes()[:4]) {
		return relayChannels.UnpackNotChannelDestinationError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["NotOwner"].ID.Bytes()[:4]) {
		return relayChannels.UnpackNotOwnerError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["PublicKeyNotSender"].ID.Bytes()[:4]) {
		return relayChannels.UnpackPublicKeyNotSenderError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["SafeERC20FailedOperation"].ID.Bytes()[:4]) {
		return relayChannels.UnpackSafeERC20FailedOperationError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["SameSourceAndDestination"].ID.Bytes()[:4]) {
		return relayChannels.UnpackSameSourceAndDestinationError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["SignerNotSource"].ID.Bytes()[:4]) {
		return relayChannels.UnpackSignerNotSourceError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["TicketNotWinning"].ID.Bytes()[:4]) {
		return relayChannels.UnpackTicketNotWinningError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["ZeroAddress"].ID.Bytes()[:4]) {
		return relayChannels.UnpackZeroAddressError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayChannels.abi.Errors["ZeroAmount"].ID.Bytes()[:4]) {
		return relayChannels.UnpackZeroAmountError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// RelayChannelsChallengeMismatch represents a ChallengeMismatch error raised by the RelayChannels contract.
type RelayChannelsChallengeMismatch struct {
	Expected common.Address
	Actual   common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ChallengeMismatch(address expected, address actual)
func RelayChannelsChallengeMismatchErrorID() common.Hash {
	return common.HexToHash("0xbb9b9a678187a1545268e03c2db014a0296851fff7414778475f297ddf7357f4")
}

// UnpackChallengeMismatchError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ChallengeMismatch(address expected, address actual)
func (relayChannels *RelayChannels) UnpackChallengeMismatchError(raw []byte) (*RelayChannelsChallengeMismatch, error) {
	out := new(RelayChannelsChallengeMismatch)
	if err := relayChannels.abi.UnpackIntoInterface(out, "ChallengeMismatch", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsChannelNotOpen represents a ChannelNotOpen error raised by the RelayChannels contract.
type RelayChannelsChannelNotOpen struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ChannelNotOpen()
func RelayChannelsChannelNotOpenErrorID() common.Hash {
	return common.HexToHash("0xd4621ed2e7910c2fc0bcaf129ad1a9222ad72a6eb2cbd0ebfbd9789414b5de44")
}

// UnpackChannelNotOpenError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ChannelNotOpen()
func (relayChannels *RelayChannels) UnpackChannelNotOpenError(raw []byte) (*RelayChannelsChannelNotOpen, error) {
	out := new(RelayChannelsChannelNotOpen)
	if err := relayChannels.abi.UnpackIntoInterface(out, "ChannelNotOpen", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsChannelNotPendingToClose represents a ChannelNotPendingToClose error raised by the RelayChannels contract.
type RelayChannelsChannelNotPendingToClose struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ChannelNotPendingToClose()
func RelayChannelsChannelNotPendingToCloseErrorID() common.Hash {
	return common.HexToHash("0x4dccf59fc938a6ac61a748650e8ecc2a7fbf90136262558ba517b49c9a7c8107")
}

// UnpackChannelNotPendingToCloseError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ChannelNotPendingToClose()
func (relayChannels *RelayChannels) UnpackChannelNotPendingToCloseError(raw []byte) (*RelayChannelsChannelNotPendingToClose, error) {
	out := new(RelayChannelsChannelNotPendingToClose)
	if err := relayChannels.abi.UnpackIntoInterface(out, "ChannelNotPendingToClose", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsChannelPendingToClose represents a ChannelPendingToClose error raised by the RelayChannels contract.
type RelayChannelsChannelPendingToClose struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ChannelPendingToClose()
func RelayChannelsChannelPendingToCloseErrorID() common.Hash {
	return common.HexToHash("0xa794c1ef9e6572d22448e4b4b4ee5b9c1c00d74c3065d36bd798e291b91b5968")
}

// UnpackChannelPendingToCloseError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ChannelPendingToClose()
func (relayChannels *RelayChannels) UnpackChannelPendingToCloseError(raw []byte) (*RelayChannelsChannelPendingToClose, error) {
	out := new(RelayChannelsChannelPendingToClose)
	if err := relayChannels.abi.UnpackIntoInterface(out, "ChannelPendingToClose", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsClosureTimeNotReached represents a ClosureTimeNotReached error raised by the RelayChannels contract.
type RelayChannelsClosureTimeNotReached struct {
	ClosureTime uint64
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ClosureTimeNotReached(uint64 closureTime)
func RelayChannelsClosureTimeNotReachedErrorID() common.Hash {
	return common.HexToHash("0xbe46066fa870faca4a2e7518fc17297855241493bb37ff107e18c19e8d1e9764")
}

// UnpackClosureTimeNotReachedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ClosureTimeNotReached(uint64 closureTime)
func (relayChannels *RelayChannels) UnpackClosureTimeNotReachedError(raw []byte) (*RelayChannelsClosureTimeNotReached, error) {
	out := new(RelayChannelsClosureTimeNotReached)
	if err := relayChannels.abi.UnpackIntoInterface(out, "ClosureTimeNotReached", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsEpochMismatch represents a EpochMismatch error raised by the RelayChannels contract.
type RelayChannelsEpochMismatch struct {
	TicketEpoch  uint32
	ChannelEpoch uint32
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error EpochMismatch(uint32 ticketEpoch, uint32 channelEpoch)
func RelayChannelsEpochMismatchErrorID() common.Hash {
	return common.HexToHash("0x577b3430711abcb7439d0a0fd140bc58aca52fe632fb964c5d1460dfa317783d")
}

// UnpackEpochMismatchError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error EpochMismatch(uint32 ticketEpoch, uint32 channelEpoch)
func (relayChannels *RelayChannels) UnpackEpochMismatchError(raw []byte) (*RelayChannelsEpochMismatch, error) {
	out := new(RelayChannelsEpochMismatch)
	if err := relayChannels.abi.UnpackIntoInterface(out, "EpochMismatch", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsIndexNotIncreasing represents a IndexNotIncreasing error raised by the RelayChannels contract.
type RelayChannelsIndexNotIncreasing struct {
	TicketIndex  uint64
	LastRedeemed uint64
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error IndexNotIncreasing(uint64 ticketIndex, uint64 lastRedeemed)
func RelayChannelsIndexNotIncreasingErrorID() common.Hash {
	return common.HexToHash("0x04673c8d933b329699933986d1fe73c06193c33e161ccf705c1261d71fc1c65c")
}

// UnpackIndexNotIncreasingError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error IndexNotIncreasing(uint64 ticketIndex, uint64 lastRedeemed)
func (relayChannels *RelayChannels) UnpackIndexNotIncreasingError(raw []byte) (*RelayChannelsIndexNotIncreasing, error) {
	out := new(RelayChannelsIndexNotIncreasing)
	if err := relayChannels.abi.UnpackIntoInterface(out, "IndexNotIncreasing", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsInsufficientChannelBalance represents a InsufficientChannelBalance error raised by the RelayChannels contract.
type RelayChannelsInsufficientChannelBalance struct {
	Amount  *big.Int
	Balance *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InsufficientChannelBalance(uint256 amount, uint256 balance)
func RelayChannelsInsufficientChannelBalanceErrorID() common.Hash {
	return common.HexToHash("0x9ae63461ade5407809d2df4685e1ed7e809f675c2a9c8c931b595defa61e722e")
}

// UnpackInsufficientChannelBalanceError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InsufficientChannelBalance(uint256 amount, uint256 balance)
func (relayChannels *RelayChannels) UnpackInsufficientChannelBalanceError(raw []byte) (*RelayChannelsInsufficientChannelBalance, error) {
	out := new(RelayChannelsInsufficientChannelBalance)
	if err := relayChannels.abi.UnpackIntoInterface(out, "InsufficientChannelBalance", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsInvalidPublicKeyLength represents a InvalidPublicKeyLength error raised by the RelayChannels contract.
type RelayChannelsInvalidPublicKeyLength struct {
	Length *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidPublicKeyLength(uint256 length)
func RelayChannelsInvalidPublicKeyLengthErrorID() common.Hash {
	return common.HexToHash("0x2f56faba4814adc55ff50bc89c8c11697c33e3096283b6205ba9125d1da7ac6f")
}

// UnpackInvalidPublicKeyLengthError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidPublicKeyLength(uint256 length)
func (relayChannels *RelayChannels) UnpackInvalidPublicKeyLengthError(raw []byte) (*RelayChannelsInvalidPublicKeyLength, error) {
	out := new(RelayChannelsInvalidPublicKeyLength)
	if err := relayChannels.abi.UnpackIntoInterface(out, "InvalidPublicKeyLength", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsInvalidResponse represents a InvalidResponse error raised by the RelayChannels contract.
type RelayChannelsInvalidResponse struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidResponse()
func RelayChannelsInvalidResponseErrorID() common.Hash {
	return common.HexToHash("0xc715138d982aac9fabee8faa1dd74a712cf8b2735bd0a781c1cc64dceb61b775")
}

// UnpackInvalidResponseError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidResponse()
func (relayChannels *RelayChannels) UnpackInvalidResponseError(raw []byte) (*RelayChannelsInvalidResponse, error) {
	out := new(RelayChannelsInvalidResponse)
	if err := relayChannels.abi.UnpackIntoInterface(out, "InvalidResponse", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsInvalidSignature represents a InvalidSignature error raised by the RelayChannels contract.
type RelayChannelsInvalidSignature struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidSignature()
func RelayChannelsInvalidSignatureErrorID() common.Hash {
	return common.HexToHash("0x8baa579fce362245063d36f11747a89dd489c54795634fc673cc0e0db51fedc5")
}

// UnpackInvalidSignatureError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidSignature()
func (relayChannels *RelayChannels) UnpackInvalidSignatureError(raw []byte) (*RelayChannelsInvalidSignature, error) {
	out := new(RelayChannelsInvalidSignature)
	if err := relayChannels.abi.UnpackIntoInterface(out, "InvalidSignature", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsInvalidWinProb represents a InvalidWinProb error raised by the RelayChannels contract.
type RelayChannelsInvalidWinProb struct {
	WinProb uint64
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InvalidWinProb(uint64 winProb)
func RelayChannelsInvalidWinProbErrorID() common.Hash {
	return common.HexToHash("0xea7c08010abd1d70e628fcdd45b6ecb072114aec972d21b09d9336b803339256")
}

// UnpackInvalidWinProbError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InvalidWinProb(uint64 winProb)
func (relayChannels *RelayChannels) UnpackInvalidWinProbError(raw []byte) (*RelayChannelsInvalidWinProb, error) {
	out := new(RelayChannelsInvalidWinProb)
	if err := relayChannels.abi.UnpackIntoInterface(out, "InvalidWinProb", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsNotChannelDestination represents a NotChannelDestination error raised by the RelayChannels contract.
type RelayChannelsNotChannelDestination struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotChannelDestination()
func RelayChannelsNotChannelDestinationErrorID() common.Hash {
	return common.HexToHash("0x148b2cee0a23f4ce84d5c3f746fc4d0e1dfa4944b11e53de1745b7027e031978")
}

// UnpackNotChannelDestinationError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotChannelDestination()
func (relayChannels *RelayChannels) UnpackNotChannelDestinationError(raw []byte) (*RelayChannelsNotChannelDestination, error) {
	out := new(RelayChannelsNotChannelDestination)
	if err := relayChannels.abi.UnpackIntoInterface(out, "NotChannelDestination", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsNotOwner represents a NotOwner error raised by the RelayChannels contract.
type RelayChannelsNotOwner struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotOwner()
func RelayChannelsNotOwnerErrorID() common.Hash {
	return common.HexToHash("0x30cd74712f59d478562d48e2d35de830db72c60a63dd08ae59199eec990b5bc4")
}

// UnpackNotOwnerError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotOwner()
func (relayChannels *RelayChannels) UnpackNotOwnerError(raw []byte) (*RelayChannelsNotOwner, error) {
	out := new(RelayChannelsNotOwner)
	if err := relayChannels.abi.UnpackIntoInterface(out, "NotOwner", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsPublicKeyNotSender represents a PublicKeyNotSender error raised by the RelayChannels contract.
type RelayChannelsPublicKeyNotSender struct {
	Derived common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error PublicKeyNotSender(address derived)
func RelayChannelsPublicKeyNotSenderErrorID() common.Hash {
	return common.HexToHash("0x117c4c3b22ce379a74c2bb6e7311a85c40275b00413aebf003799f506305b744")
}

// UnpackPublicKeyNotSenderError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error PublicKeyNotSender(address derived)
func (relayChannels *RelayChannels) UnpackPublicKeyNotSenderError(raw []byte) (*RelayChannelsPublicKeyNotSender, error) {
	out := new(RelayChannelsPublicKeyNotSender)
	if err := relayChannels.abi.UnpackIntoInterface(out, "PublicKeyNotSender", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsSafeERC20FailedOperation represents a SafeERC20FailedOperation error raised by the RelayChannels contract.
type RelayChannelsSafeERC20FailedOperation struct {
	Token common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error SafeERC20FailedOperation(address token)
func RelayChannelsSafeERC20FailedOperationErrorID() common.Hash {
	return common.HexToHash("0x5274afe73c98b4749fc91ffae6b7b574e7842cb2144a159e9377a5f20b32edf9")
}

// UnpackSafeERC20FailedOperationError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error SafeERC20FailedOperation(address token)
func (relayChannels *RelayChannels) UnpackSafeERC20FailedOperationError(raw []byte) (*RelayChannelsSafeERC20FailedOperation, error) {
	out := new(RelayChannelsSafeERC20FailedOperation)
	if err := relayChannels.abi.UnpackIntoInterface(out, "SafeERC20FailedOperation", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsSameSourceAndDestination represents a SameSourceAndDestination error raised by the RelayChannels contract.
type RelayChannelsSameSourceAndDestination struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error SameSourceAndDestination()
func RelayChannelsSameSourceAndDestinationErrorID() common.Hash {
	return common.HexToHash("0x58ed2fbc74370fd47268a696cf294206badbc209df21b929366c61104d4602c1")
}

// UnpackSameSourceAndDestinationError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error SameSourceAndDestination()
func (relayChannels *RelayChannels) UnpackSameSourceAndDestinationError(raw []byte) (*RelayChannelsSameSourceAndDestination, error) {
	out := new(RelayChannelsSameSourceAndDestination)
	if err := relayChannels.abi.UnpackIntoInterface(out, "SameSourceAndDestination", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsSignerNotSource represents a SignerNotSource error raised by the RelayChannels contract.
type RelayChannelsSignerNotSource struct {
	Signer common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error SignerNotSource(address signer)
func RelayChannelsSignerNotSourceErrorID() common.Hash {
	return common.HexToHash("0x576d4a5db4d2603f6665e27362eb8bcbbf52eeb52ec9919f4a847ab4b17d7fca")
}

// UnpackSignerNotSourceError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error SignerNotSource(address signer)
func (relayChannels *RelayChannels) UnpackSignerNotSourceError(raw []byte) (*RelayChannelsSignerNotSource, error) {
	out := new(RelayChannelsSignerNotSource)
	if err := relayChannels.abi.UnpackIntoInterface(out, "SignerNotSource", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsTicketNotWinning represents a TicketNotWinning error raised by the RelayChannels contract.
type RelayChannelsTicketNotWinning struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error TicketNotWinning()
func RelayChannelsTicketNotWinningErrorID() common.Hash {
	return common.HexToHash("0x2aa5418825a06816359926bf9e3d7a4c25d50bf1640b757185315afbd6570e46")
}

// UnpackTicketNotWinningError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error TicketNotWinning()
func (relayChannels *RelayChannels) UnpackTicketNotWinningError(raw []byte) (*RelayChannelsTicketNotWinning, error) {
	out := new(RelayChannelsTicketNotWinning)
	if err := relayChannels.abi.UnpackIntoInterface(out, "TicketNotWinning", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsZeroAddress represents a ZeroAddress error raised by the RelayChannels contract.
type RelayChannelsZeroAddress struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroAddress()
func RelayChannelsZeroAddressErrorID() common.Hash {
	return common.HexToHash("0xd92e233df2717d4a40030e20904abd27b68fcbeede117eaaccbbdac9618c8c73")
}

// UnpackZeroAddressError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroAddress()
func (relayChannels *RelayChannels) UnpackZeroAddressError(raw []byte) (*RelayChannelsZeroAddress, error) {
	out := new(RelayChannelsZeroAddress)
	if err := relayChannels.abi.UnpackIntoInterface(out, "ZeroAddress", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayChannelsZeroAmount represents a ZeroAmount error raised by the RelayChannels contract.
type RelayChannelsZeroAmount struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ZeroAmount()
func RelayChannelsZeroAmountErrorID() common.Hash {
	return common.HexToHash("0x1f2a2005cb66a8e145327e8814e243a0996aec9bfe1e15a495778b1236dbd485")
}

// UnpackZeroAmountError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ZeroAmount()
func (relayChannels *RelayChannels) UnpackZeroAmountError(raw []byte) (*RelayChannelsZeroAmount, error) {
	out := new(RelayChannelsZeroAmount)
	if err := relayChannels.abi.UnpackIntoInterface(out, "ZeroAmount", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayTokenMetaData contains all meta data concerning the RelayToken contract.
var RelayTokenMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"initialSupply\",\"type\":\"uint256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"spender\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"allowance\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"needed\",\"type\":\"uint256\"}],\"name\":\"ERC20InsufficientAllowance\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"balance\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"needed\",\"type\":\"uint256\"}],\"name\":\"ERC20InsufficientBalance\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"approver\",\"type\":\"address\"}],\"name\":\"ERC20InvalidApprover\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"receiver\",\"type\":\"address\"}],\"name\":\"ERC20InvalidReceiver\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"sender\",\"type\":\"address\"}],\"name\":\"ERC20InvalidSender\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"spender\",\"type\":\"address\"}],\"name\":\"ERC20InvalidSpender\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"spender\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"Approval\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"Transfer\",\"type\":\"event\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"owner\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"spender\",\"type\":\"address\"}],\"name\":\"allowance\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"spender\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"approve\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"balanceOf\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"decimals\",\"outputs\":[{\"internalType\":\"uint8\",\"name\":\"\",\"type\":\"uint8\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"name\",\"outputs\":[{\"internalType\":\"string\",\"name\":\"\",\"type\":\"string\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"symbol\",\"outputs\":[{\"internalType\":\"string\",\"name\":\"\",\"type\":\"string\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"totalSupply\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"transfer\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"from\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"transferFrom\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "f4752090e324fcf11c2ecbc270ecc3f20c",
	Bin: "0x608060405234801561000f575f5ffd5b50604051610a96380380610a9683398101604081905261002e91610208565b6040518060400160405280600b81526020016a2932b630bc902a37b5b2b760a91b8152506040518060400160405280600581526020016452454c415960d81b815250816003908161007f91906102c2565b50600461008c82826102c2565b50505061009f33826100a560201b60201c565b506103a5565b6001600160a01b0382166100d35760405163ec442f0560e01b81525f60048201526024015b60405180910390fd5b6100de5f83836100e2565b5050565b6001600160a01b03831661010c578060025f8282546101019190610380565b9091555061017c9050565b6001600160a01b0383165f908152602081905260409020548181101561015e5760405163391434e360e21b81526001600160a01b038516600482015260248101829052604481018390526064016100ca565b6001600160a01b0384165f9081526020819052604090209082900390555b6001600160a01b038216610198576002805482900390556101b6565b6001600160a01b0382165f9081526020819052604090208054820190555b816001600160a01b0316836001600160a01b03167fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef836040516101fb91815260200190565b60405180910390a3505050565b5f60208284031215610218575f5ffd5b5051919050565b634e487b7160e01b5f52604160045260245ffd5b600181811c9082168061024757607f821691505b60208210810361026557634e487b7160e01b5f52602260045260245ffd5b50919050565b601f8211156102bd57828211156102bd57805f5260205f20601f840160051c602085101561029657505f5b90810190601f840160051c035f5b818110156102b9575f838201556001016102a4565b5050505b505050565b81516001600160401b038111156102db576102db61021f565b6102ef816102e98454610233565b8461026b565b6020601f821160018114610321575f831561030a5750848201515b5f19600385901b1c1916600184901b178455610379565b5f84815260208120601f198516915b828110156103505787850151825560209485019460019092019101610330565b508482101561036d57868401515f19600387901b60f8161c191681555b505060018360011b0184555b5050505050565b8082018082111561039f57634e487b7160e01b5f52601160045260245ffd5b92915050565b6106e4806103b25f395ff3fe608060405234801561000f575f5ffd5b5060043610610090575f3560e01c8063313ce56711610063578063313ce567146100fa57806370a082311461010957806395d89b4114610131578063a9059cbb14610139578063dd62ed3e1461014c575f5ffd5b806306fdde0314610094578063095ea7b3146100b257806318160ddd146100d557806323b872dd146100e7575b5f5ffd5b61009c610184565b6040516100a99190610554565b60405180910390f35b6100c56100c03660046105a4565b610214565b60405190151581526020016100a9565b6002545b6040519081526020016100a9565b6100c56100f53660046105cc565b61022d565b604051601281526020016100a9565b6100d9610117366004610606565b6001600160a01b03165f9081526020819052604090205490565b61009c610250565b6100c56101473660046105a4565b61025f565b6100d961015a366004610626565b6001600160a01b039182165f90815260016020908152604080832093909416825291909152205490565b60606003805461019390610657565b80601f01602080910402602001604051908101604052809291908181526020018280546101bf90610657565b801561020a5780601f106101e15761010080835404028352916020019161020a565b820191905f5260205f20905b8154815290600101906020018083116101ed57829003601f168201915b5050505050905090565b5f3361022181858561026c565b60019150505b92915050565b5f3361023a85828561027e565b6102458585856102ff565b506001949350505050565b60606004805461019390610657565b5f336102218185856102ff565b610279838383600161035c565b505050565b6001600160a01b038381165f908152600160209081526040808320938616835292905220545f198110156102f957818110156102eb57604051637dc7a0d960e11b81526001600160a01b038416600482015260248101829052604481018390526064015b60405180910390fd5b6102f984848484035f61035c565b50505050565b6001600160a01b03831661032857604051634b637e8f60e11b81525f60048201526024016102e2565b6001600160a01b0382166103515760405163ec442f0560e01b81525f60048201526024016102e2565b61027983838361042e565b6001600160a01b0384166103855760405163e602df0560e01b81525f60048201526024016102e2565b6001600160a01b0383166103ae57604051634a1406b160e11b81525f60048201526024016102e2565b6001600160a01b038085165f90815260016020908152604080832093871683529290522082905580156102f957826001600160a01b0316846001600160a01b03167f8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b9258460405161042091815260200190565b60405180910390a350505050565b6001600160a01b038316610458578060025f82825461044d919061068f565b909155506104c89050565b6001600160a01b0383165f90815260208190526040902054818110156104aa5760405163391434e360e21b81526001600160a01b038516600482015260248101829052604481018390526064016102e2565b6001600160a01b0384165f9081526020819052604090209082900390555b6001600160a01b0382166104e457600280548290039055610502565b6001600160a01b0382165f9081526020819052604090208054820190555b816001600160a01b0316836001600160a01b03167fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef8360405161054791815260200190565b60405180910390a3505050565b602081525f82518060208401528060208501604085015e5f604082850101526040601f19601f83011684010191505092915050565b80356001600160a01b038116811461059f575f5ffd5b919050565b5f5f604083850312156105b5575f5ffd5b6105be83610589565b946020939093013593505050565b5f5f5f606084860312156105de575f5ffd5b6105e784610589565b92506105f560208501610589565b929592945050506040919091013590565b5f60208284031215610616575f5ffd5b61061f82610589565b9392505050565b5f5f60408385031215610637575f5ffd5b61064083610589565b915061064e60208401610589565b90509250929050565b600181811c9082168061066b57607f821691505b60208210810361068957634e487b7160e01b5f52602260045260245ffd5b50919050565b8082018082111561022757634e487b7160e01b5f52601160045260245ffdfea2646970667358221220363aa0fc37d5868d80456dc25e0f0961010273f712a75c178ffa5075adde946864736f6c63430008250033",
}

// RelayToken is an auto generated Go binding around an Ethereum contract.
type RelayToken struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *RelayToken) GetABI() abi.ABI {
	return c.abi
}

// NewRelayToken creates a new instance of RelayToken.
func NewRelayToken() *RelayToken {
	parsed, err := RelayTokenMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &RelayToken{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *RelayToken) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(uint256 initialSupply) returns()
func (relayToken *RelayToken) PackConstructor(initialSupply *big.Int) []byte {
	enc, err := relayToken.abi.Pack("", initialSupply)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackAllowance is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xdd62ed3e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function allowance(address owner, address spender) view returns(uint256)
func (relayToken *RelayToken) PackAllowance(owner common.Address, spender common.Address) []byte {
	enc, err := relayToken.abi.Pack("allowance", owner, spender)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAllowance is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xdd62ed3e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function allowance(address owner, address spender) view returns(uint256)
func (relayToken *RelayToken) TryPackAllowance(owner common.Address, spender common.Address) ([]byte, error) {
	return relayToken.abi.Pack("allowance", owner, spender)
}

// UnpackAllowance is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xdd62ed3e.
//
// Solidity: function allowance(address owner, address spender) view returns(uint256)
func (relayToken *RelayToken) UnpackAllowance(data []byte) (*big.Int, error) {
	out, err := relayToken.abi.Unpack("allowance", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackApprove is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x095ea7b3.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function approve(address spender, uint256 value) returns(bool)
func (relayToken *RelayToken) PackApprove(spender common.Address, value *big.Int) []byte {
	enc, err := relayToken.abi.Pack("approve", spender, value)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackApprove is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x095ea7b3.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function approve(address spender, uint256 value) returns(bool)
func (relayToken *RelayToken) TryPackApprove(spender common.Address, value *big.Int) ([]byte, error) {
	return relayToken.abi.Pack("approve", spender, value)
}

// UnpackApprove is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x095ea7b3.
//
// Solidity: function approve(address spender, uint256 value) returns(bool)
func (relayToken *RelayToken) UnpackApprove(data []byte) (bool, error) {
	out, err := relayToken.abi.Unpack("approve", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackBalanceOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x70a08231.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function balanceOf(address account) view returns(uint256)
func (relayToken *RelayToken) PackBalanceOf(account common.Address) []byte {
	enc, err := relayToken.abi.Pack("balanceOf", account)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackBalanceOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x70a08231.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function balanceOf(address account) view returns(uint256)
func (relayToken *RelayToken) TryPackBalanceOf(account common.Address) ([]byte, error) {
	return relayToken.abi.Pack("balanceOf", account)
}

// UnpackBalanceOf is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x70a08231.
//
// Solidity: function balanceOf(address account) view returns(uint256)
func (relayToken *RelayToken) UnpackBalanceOf(data []byte) (*big.Int, error) {
	out, err := relayToken.abi.Unpack("balanceOf", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackDecimals is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x313ce567.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function decimals() view returns(uint8)
func (relayToken *RelayToken) PackDecimals() []byte {
	enc, err := relayToken.abi.Pack("decimals")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDecimals is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x313ce567.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function decimals() view returns(uint8)
func (relayToken *RelayToken) TryPackDecimals() ([]byte, error) {
	return relayToken.abi.Pack("decimals")
}

// UnpackDecimals is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x313ce567.
//
// Solidity: function decimals() view returns(uint8)
func (relayToken *RelayToken) UnpackDecimals(data []byte) (uint8, error) {
	out, err := relayToken.abi.Unpack("decimals", data)
	if err != nil {
		return *new(uint8), err
	}
	out0 := *abi.ConvertType(out[0], new(uint8)).(*uint8)
	return out0, nil
}

// PackName is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x06fdde03.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function name() view returns(string)
func (relayToken *RelayToken) PackName() []byte {
	enc, err := relayToken.abi.Pack("name")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackName is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x06fdde03.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function name() view returns(string)
func (relayToken *RelayToken) TryPackName() ([]byte, error) {
	return relayToken.abi.Pack("name")
}

// UnpackName is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x06fdde03.
//
// Solidity: function name() view returns(string)
func (relayToken *RelayToken) UnpackName(data []byte) (string, error) {
	out, err := relayToken.abi.Unpack("name", data)
	if err != nil {
		return *new(string), err
	}
	out0 := *abi.ConvertType(out[0], new(string)).(*string)
	return out0, nil
}

// PackSymbol is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x95d89b41.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function symbol() view returns(string)
func (relayToken *RelayToken) PackSymbol() []byte {
	enc, err := relayToken.abi.Pack("symbol")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSymbol is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x95d89b41.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function symbol() view returns(string)
func (relayToken *RelayToken) TryPackSymbol() ([]byte, error) {
	return relayToken.abi.Pack("symbol")
}

// UnpackSymbol is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x95d89b41.
//
// Solidity: function symbol() view returns(string)
func (relayToken *RelayToken) UnpackSymbol(data []byte) (string, error) {
	out, err := relayToken.abi.Unpack("symbol", data)
	if err != nil {
		return *new(string), err
	}
	out0 := *abi.ConvertType(out[0], new(string)).(*string)
	return out0, nil
}

// PackTotalSupply is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x18160ddd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function totalSupply() view returns(uint256)
func (relayToken *RelayToken) PackTotalSupply() []byte {
	enc, err := relayToken.abi.Pack("totalSupply")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTotalSupply is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x18160ddd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function totalSupply() view returns(uint256)
func (relayToken *RelayToken) TryPackTotalSupply() ([]byte, error) {
	return relayToken.abi.Pack("totalSupply")
}

// UnpackTotalSupply is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x18160ddd.
//
// Solidity: function totalSupply() view returns(uint256)
func (relayToken *RelayToken) UnpackTotalSupply(data []byte) (*big.Int, error) {
	out, err := relayToken.abi.Unpack("totalSupply", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackTransfer is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa9059cbb.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function transfer(address to, uint256 value) returns(bool)
func (relayToken *RelayToken) PackTransfer(to common.Address, value *big.Int) []byte {
	enc, err := relayToken.abi.Pack("transfer", to, value)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTransfer is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa9059cbb.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function transfer(address to, uint256 value) returns(bool)
func (relayToken *RelayToken) TryPackTransfer(to common.Address, value *big.Int) ([]byte, error) {
	return relayToken.abi.Pack("transfer", to, value)
}

// UnpackTransfer is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xa9059cbb.
//
// Solidity: function transfer(address to, uint256 value) returns(bool)
func (relayToken *RelayToken) UnpackTransfer(data []byte) (bool, error) {
	out, err := relayToken.abi.Unpack("transfer", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackTransferFrom is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x23b872dd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function transferFrom(address from, address to, uint256 value) returns(bool)
func (relayToken *RelayToken) PackTransferFrom(from common.Address, to common.Address, value *big.Int) []byte {
	enc, err := relayToken.abi.Pack("transferFrom", from, to, value)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTransferFrom is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x23b872dd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function transferFrom(address from, address to, uint256 value) returns(bool)
func (relayToken *RelayToken) TryPackTransferFrom(from common.Address, to common.Address, value *big.Int) ([]byte, error) {
	return relayToken.abi.Pack("transferFrom", from, to, value)
}

// UnpackTransferFrom is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x23b872dd.
//
// Solidity: function transferFrom(address from, address to, uint256 value) returns(bool)
func (relayToken *RelayToken) UnpackTransferFrom(data []byte) (bool, error) {
	out, err := relayToken.abi.Unpack("transferFrom", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// RelayTokenApproval represents a Approval event raised by the RelayToken contract.
type RelayTokenApproval struct {
	Owner   common.Address
	Spender common.Address
	Value   *big.Int
	Raw     *types.Log // Blockchain specific contextual infos
}

const RelayTokenApprovalEventName = "Approval"

// ContractEventName returns the user-defined event name.
func (RelayTokenApproval) ContractEventName() string {
	return RelayTokenApprovalEventName
}

// UnpackApprovalEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Approval(address indexed owner, address indexed spender, uint256 value)
func (relayToken *RelayToken) UnpackApprovalEvent(log *types.Log) (*RelayTokenApproval, error) {
	event := "Approval"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != relayToken.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(RelayTokenApproval)
	if len(log.Data) > 0 {
		if err := relayToken.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range relayToken.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// RelayTokenTransfer represents a Transfer event raised by the RelayToken contract.
type RelayTokenTransfer struct {
	From  common.Address
	To    common.Address
	Value *big.Int
	Raw   *types.Log // Blockchain specific contextual infos
}

const RelayTokenTransferEventName = "Transfer"

// ContractEventName returns the user-defined event name.
func (RelayTokenTransfer) ContractEventName() string {
	return RelayTokenTransferEventName
}

// UnpackTransferEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Transfer(address indexed from, address indexed to, uint256 value)
func (relayToken *RelayToken) UnpackTransferEvent(log *types.Log) (*RelayTokenTransfer, error) {
	event := "Transfer"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != relayToken.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(RelayTokenTransfer)
	if len(log.Data) > 0 {
		if err := relayToken.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range relayToken.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// UnpackError attempts to decode the provided error data using user-defined
// error definitions.
func (relayToken *RelayToken) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], relayToken.abi.Errors["ERC20InsufficientAllowance"].ID.Bytes()[:4]) {
		return relayToken.UnpackERC20InsufficientAllowanceError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayToken.abi.Errors["ERC20InsufficientBalance"].ID.Bytes()[:4]) {
		return relayToken.UnpackERC20InsufficientBalanceError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayToken.abi.Errors["ERC20InvalidApprover"].ID.Bytes()[:4]) {
		return relayToken.UnpackERC20InvalidApproverError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayToken.abi.Errors["ERC20InvalidReceiver"].ID.Bytes()[:4]) {
		return relayToken.UnpackERC20InvalidReceiverError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayToken.abi.Errors["ERC20InvalidSender"].ID.Bytes()[:4]) {
		return relayToken.UnpackERC20InvalidSenderError(raw[4:])
	}
	if bytes.Equal(raw[:4], relayToken.abi.Errors["ERC20InvalidSpender"].ID.Bytes()[:4]) {
		return relayToken.UnpackERC20InvalidSpenderError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// RelayTokenERC20InsufficientAllowance represents a ERC20InsufficientAllowance error raised by the RelayToken contract.
type RelayTokenERC20InsufficientAllowance struct {
	Spender   common.Address
	Allowance *big.Int
	Needed    *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)
func RelayTokenERC20InsufficientAllowanceErrorID() common.Hash {
	return common.HexToHash("0xfb8f41b23e99d2101d86da76cdfa87dd51c82ed07d3cb62cbc473e469dbc75c3")
}

// UnpackERC20InsufficientAllowanceError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)
func (relayToken *RelayToken) UnpackERC20InsufficientAllowanceError(raw []byte) (*RelayTokenERC20InsufficientAllowance, error) {
	out := new(RelayTokenERC20InsufficientAllowance)
	if err := relayToken.abi.UnpackIntoInterface(out, "ERC20InsufficientAllowance", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayTokenERC20InsufficientBalance represents a ERC20InsufficientBalance error raised by the RelayToken contract.
type RelayTokenERC20InsufficientBalance struct {
	Sender  common.Address
	Balance *big.Int
	Needed  *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)
func RelayTokenERC20InsufficientBalanceErrorID() common.Hash {
	return common.HexToHash("0xe450d38cd8d9f7d95077d567d60ed49c7254716e6ad08fc9872816c97e0ffec6")
}

// UnpackERC20InsufficientBalanceError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)
func (relayToken *RelayToken) UnpackERC20InsufficientBalanceError(raw []byte) (*RelayTokenERC20InsufficientBalance, error) {
	out := new(RelayTokenERC20InsufficientBalance)
	if err := relayToken.abi.UnpackIntoInterface(out, "ERC20InsufficientBalance", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayTokenERC20InvalidApprover represents a ERC20InvalidApprover error raised by the RelayToken contract.
type RelayTokenERC20InvalidApprover struct {
	Approver common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ERC20InvalidApprover(address approver)
func RelayTokenERC20InvalidApproverErrorID() common.Hash {
	return common.HexToHash("0xe602df05cc75712490294c6c104ab7c17f4030363910a7a2626411c6d3118847")
}

// UnpackERC20InvalidApproverError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ERC20InvalidApprover(address approver)
func (relayToken *RelayToken) UnpackERC20InvalidApproverError(raw []byte) (*RelayTokenERC20InvalidApprover, error) {
	out := new(RelayTokenERC20InvalidApprover)
	if err := relayToken.abi.UnpackIntoInterface(out, "ERC20InvalidApprover", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayTokenERC20InvalidReceiver represents a ERC20InvalidReceiver error raised by the RelayToken contract.
type RelayTokenERC20InvalidReceiver struct {
	Receiver common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ERC20InvalidReceiver(address receiver)
func RelayTokenERC20InvalidReceiverErrorID() common.Hash {
	return common.HexToHash("0xec442f055133b72f3b2f9f0bb351c406b178527de2040a7d1feb4e058771f613")
}

// UnpackERC20InvalidReceiverError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ERC20InvalidReceiver(address receiver)
func (relayToken *RelayToken) UnpackERC20InvalidReceiverError(raw []byte) (*RelayTokenERC20InvalidReceiver, error) {
	out := new(RelayTokenERC20InvalidReceiver)
	if err := relayToken.abi.UnpackIntoInterface(out, "ERC20InvalidReceiver", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayTokenERC20InvalidSender represents a ERC20InvalidSender error raised by the RelayToken contract.
type RelayTokenERC20InvalidSender struct {
	Sender common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ERC20InvalidSender(address sender)
func RelayTokenERC20InvalidSenderErrorID() common.Hash {
	return common.HexToHash("0x96c6fd1edd0cd6ef7ff0ecc0facdf53148dc0048b57fe58af65755250a7a96bd")
}

// UnpackERC20InvalidSenderError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ERC20InvalidSender(address sender)
func (relayToken *RelayToken) UnpackERC20InvalidSenderError(raw []byte) (*RelayTokenERC20InvalidSender, error) {
	out := new(RelayTokenERC20InvalidSender)
	if err := relayToken.abi.UnpackIntoInterface(out, "ERC20InvalidSender", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// RelayTokenERC20InvalidSpender represents a ERC20InvalidSpender error raised by the RelayToken contract.
type RelayTokenERC20InvalidSpender struct {
	Spender common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error ERC20InvalidSpender(address spender)
func RelayTokenERC20InvalidSpenderErrorID() common.Hash {
	return common.HexToHash("0x94280d62c347d8d9f4d59a76ea321452406db88df38e0c9da304f58b57b373a2")
}

// UnpackERC20InvalidSpenderError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error ERC20InvalidSpender(address spender)
func (relayToken *RelayToken) UnpackERC20InvalidSpenderError(raw []byte) (*RelayTokenERC20InvalidSpender, error) {
	out := new(RelayTokenERC20InvalidSpender)
	if err := relayToken.abi.UnpackIntoInterface(out, "ERC20InvalidSpender", raw); err != nil {
		return nil, err
	}
	return out, nil
}
