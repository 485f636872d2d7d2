import { parseAbi } from 'viem'

/**
 * The share token (dvUSDC): a 6-decimal ERC-20 that cannot move between two non-zero addresses,
 * minted and burned by the router only. Its symbol is read from the chain.
 */
export const shareTokenAbi = parseAbi([
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
  'function totalSupply() view returns (uint256)',
  'function balanceOf(address account) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function transferFrom(address from, address to, uint256 value) returns (bool)',
  'function approve(address spender, uint256 value) returns (bool)',
  'function VAULT_ROUTER() view returns (address)',
  'function mint(address to, uint256 amount)',
  'function burn(address from, uint256 amount)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
  'error NonTransferable()',
  'error OnlyVaultRouter(address caller)',
  'error ZeroRouter()',
  // OpenZeppelin ERC-20 errors
  'error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)',
  'error ERC20InvalidSender(address sender)',
  'error ERC20InvalidReceiver(address receiver)',
  'error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)',
  'error ERC20InvalidApprover(address approver)',
  'error ERC20InvalidSpender(address spender)',
])
