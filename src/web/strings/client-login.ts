/** Every word of the page where a person lets a Nextcloud or ownCloud app sign in (pages/client-login.tsx). */
export const clientLogin = {
  title: 'Connect an app',
  intro: 'An app asks to sign in to your drive as you. It named itself:',
  from: (address: string) => `It asked from the address ${address}.`,
  as: (user: string) => `It will sign in as ${user} with an app password of its own, named after it, which you can revoke on your Account page.`,
  shares: 'The app will also be able to make, change and remove shares of your files (links and shares with others), as its share button does.',
  warning: 'Grant access only if you have just started signing in from this app yourself: whoever made this request gets to your files.',
  grant: 'Grant access',
  granting: 'Granting access…',
  cancel: 'Cancel',
  granted: 'Access granted: the app is signing in. You can close this window.',
  grantedRedirect: 'Access granted: returning to the app…',
  cancelled: 'Cancelled: the app was not given access. You can close this window.',
  over: 'This sign-in request is over: it expired, was cancelled or was already granted. Start signing in from the app again.',
  passwordAgain: 'You signed in more than 10 minutes ago: enter your password to grant access.',
  noBridge: 'The WebDAV address of this server is not known, so no app can be connected here.',
};
