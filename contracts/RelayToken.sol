// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title RelayToken
/// @notice The network token of relayd: a plain ERC-20 with 18 decimals that pays relayers through
/// the tickets redeemed in RelayChannels. The whole supply is minted once, to the deployer, at
/// construction; there is no mint function afterwards.
contract RelayToken is ERC20 {
    /// @param initialSupply amount, in the smallest unit (10^-18 RELAY), minted to the deployer.
    constructor(uint256 initialSupply) ERC20("Relay Token", "RELAY") {
        _mint(msg.sender, initialSupply);
    }
}
