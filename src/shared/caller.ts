/** Who is calling the API: the application a token was issued to, its account and its scopes. */
export interface AuthContext {
  accountId: number;
  applicationId: number;
  /** "*" or a space-separated list of scope areas (see src/http/scopes.ts). */
  scopes: string;
}
