// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title AaveTestUSDC
/// @notice Devnet stand-in for the vault's USDC on Base Sepolia, Aave's test token "USDC" / "USDC" (6 decimals): an
///         ERC-20 with EIP-2612 `permit` in an EIP-712 domain of `name()` and version "1", and no EIP-3009. A call
///         to `transferWithAuthorization` or `receiveWithAuthorization` reverts with no data, as a function the
///         contract does not have does (there is no fallback). So an x402 buyer pays it through Permit2.
/// @dev It reproduces Aave's test token where a client can tell: the reason strings (`ERC20: transfer amount exceeds
///      balance` / `… exceeds allowance`, checked in that order, the balance first), an allowance that always goes
///      down (even `type(uint256).max`), the permit's `INVALID_OWNER` / `INVALID_EXPIRATION` / `INVALID_SIGNATURE`, and
///      `EIP712_REVISION()`; there is no `version()`. The domain separator is computed for the address the code runs
///      at. `mint` is open to anyone: the devnet's faucet, which the mock venues also use to back their interest.
contract AaveTestUSDC {
    string public constant name = "USDC";
    string public constant symbol = "USDC";
    uint8 public constant decimals = 6;
    // solhint-disable-next-line var-name-mixedcase
    bytes public constant EIP712_REVISION = bytes("1");
    bytes32 public constant PERMIT_TYPEHASH =
        keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)");
    bytes32 private constant EIP712_DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");

    uint256 public totalSupply;
    mapping(address account => uint256) public balanceOf;
    mapping(address owner => mapping(address spender => uint256)) public allowance;
    mapping(address owner => uint256) private _nonces;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    /// @notice The EIP-712 domain separator: `name()`, version "1", this chain, this address.
    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(
            abi.encode(
                EIP712_DOMAIN_TYPEHASH, keccak256(bytes(name)), keccak256(EIP712_REVISION), block.chainid, address(this)
            )
        );
    }

    /// @notice The EIP-2612 nonce `owner`'s next permit must carry.
    function nonces(address owner) external view returns (uint256) {
        return _nonces[owner];
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _transfer(msg.sender, to, amount);
        return true;
    }

    /// @dev The balance is checked before the allowance, as in Aave's token.
    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        _transfer(from, to, amount);
        uint256 current = allowance[from][msg.sender];
        require(current >= amount, "ERC20: transfer amount exceeds allowance");
        _approve(from, msg.sender, current - amount);
        return true;
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        _approve(msg.sender, spender, amount);
        return true;
    }

    function increaseAllowance(address spender, uint256 addedValue) external returns (bool) {
        _approve(msg.sender, spender, allowance[msg.sender][spender] + addedValue);
        return true;
    }

    function decreaseAllowance(address spender, uint256 subtractedValue) external returns (bool) {
        uint256 current = allowance[msg.sender][spender];
        require(current >= subtractedValue, "ERC20: decreased allowance below zero");
        _approve(msg.sender, spender, current - subtractedValue);
        return true;
    }

    /// @notice EIP-2612: `owner`'s signature approves `spender` for `value` until `deadline` (inclusive).
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external
    {
        require(owner != address(0), "INVALID_OWNER");
        require(block.timestamp <= deadline, "INVALID_EXPIRATION");
        uint256 nonce = _nonces[owner];
        bytes32 digest = keccak256(
            abi.encodePacked(
                "\x19\x01",
                DOMAIN_SEPARATOR(),
                keccak256(abi.encode(PERMIT_TYPEHASH, owner, spender, value, nonce, deadline))
            )
        );
        require(owner == ecrecover(digest, v, r, s), "INVALID_SIGNATURE");
        _nonces[owner] = nonce + 1;
        _approve(owner, spender, value);
    }

    /// @notice Mints `value` to the caller. Open to anyone (devnet faucet).
    function mint(uint256 value) external returns (bool) {
        _mint(msg.sender, value);
        return true;
    }

    /// @notice Mints `value` to `account`. Open to anyone (devnet faucet).
    function mint(address account, uint256 value) external returns (bool) {
        _mint(account, value);
        return true;
    }

    function _transfer(address from, address to, uint256 amount) private {
        require(from != address(0), "ERC20: transfer from the zero address");
        require(to != address(0), "ERC20: transfer to the zero address");
        uint256 balance = balanceOf[from];
        require(balance >= amount, "ERC20: transfer amount exceeds balance");
        unchecked {
            balanceOf[from] = balance - amount;
        }
        balanceOf[to] += amount;
        emit Transfer(from, to, amount);
    }

    function _mint(address account, uint256 amount) private {
        require(account != address(0), "ERC20: mint to the zero address");
        totalSupply += amount;
        balanceOf[account] += amount;
        emit Transfer(address(0), account, amount);
    }

    function _approve(address owner, address spender, uint256 amount) private {
        require(owner != address(0), "ERC20: approve from the zero address");
        require(spender != address(0), "ERC20: approve to the zero address");
        allowance[owner][spender] = amount;
        emit Approval(owner, spender, amount);
    }
}
