## La page du joueur (/play) et la page publique (/public) en français : les mêmes ids que
## play-en.ftl. Les montants arrivent déjà écrits dans la devise de la table, à la
## française (money.js). Une id absente d'ici s'affiche en anglais.

## Partagé avec le dessin de la table (table.js)

dealer-label = Croupier
seat-label = Place { $seat }
no-bet = pas de mise
no-bets-round = aucune mise ce tour-ci
no-round = pas encore de tour
hand-bust = SAUTÉ
hand-blackjack = BJ
hand-soft = { $total } souple
dealer-blackjack-no = pas de blackjack du croupier
dealer-blackjack-yes = blackjack du croupier
outcome-blackjack = blackjack
outcome-win = gagné
outcome-charlie = Charlie
outcome-caribbean21 = Caribbean 21
outcome-push = égalité
outcome-lose = perdu
outcome-bust = sauté
outcome-surrender = abandon
outcome-even_money = paiement à égalité
outcome-cancelled = remboursé

## Noms des jeux et des mises annexes

game-caribbean21 = Caribbean 21
game-deluxe = Blackjack Deluxe
game-infor6 = Blackjack In for 6
game-multihand = Blackjack multi-mains
game-ultimate = Blackjack Ultimate
side-pair = Paire
side-in_for_6 = In for 6
side-21-plus-3 = 21 + 3
side-top_21-plus-3 = Top 21 + 3
side-qq_as_lucky_ladies = Lucky Ladies QQ
side-c3 = C3
side-lucky_aces = Lucky Aces
side-lucky_ladies = Lucky Ladies
side-lucky_lucky = Lucky Lucky
side-match = Match Up
side-a_2 = A–2
side-blackjack_bonus = Bonus Blackjack
side-poker_3 = Poker 3
side-poker_3_bonus = Bonus Poker 3
side-kk = KK
side-jj = JJ
side-qq = QQ
side-suits = Couleurs
side-19_plus = 19+
side-sevens = Les 7

## Les combinaisons gagnantes des paris annexes (règles) : `combo-ID`.
combo-suited_trips = Brelan assorti
combo-perfect_pair = Paire parfaite
combo-colored_pair = Paire de même couleur
combo-mixed_pair = Paire mixte
combo-easy_six = Six facile
combo-hard_six-exacta = Six dur, même enseigne
combo-hard_six-coloured = Six dur, même couleur
combo-hard_six-mixed = Six dur, couleurs mêlées
combo-suited_three_of_a_kind = Brelan de même enseigne
combo-straight_flush = Quinte flush
combo-three_of_a_kind = Brelan
combo-straight = Suite
combo-flush = Couleur
combo-queen_of_hearts_pair_with_dealer_blackjack = Paire de dames de cœur avec blackjack du croupier
combo-queen_of_hearts_pair = Paire de dames de cœur
combo-matched_20 = 20 identique
combo-suited_20 = 20 assorti
combo-any_20 = 20 quelconque
combo-any_19 = 19 quelconque
combo-highest_hearts = Cœurs majeurs
combo-jacks_in_black = Valets noirs
combo-triplets = Brelan
combo-red_carpet = Tapis rouge
combo-four_aces = Quatre as
combo-three_suited_aces = Trois as assortis
combo-three_aces = Trois as
combo-two_suited_aces = Deux as assortis
combo-two_aces = Deux as
combo-ace_of_diamonds = As de carreau
combo-one_ace = Un as
combo-suited_777 = 7-7-7 assorti
combo-suited_678 = 6-7-8 assorti
combo-777 = 7-7-7
combo-678 = 6-7-8
combo-suited_21 = 21 assorti
combo-21 = 21 quelconque
combo-two_suited_matches = Deux correspondances assorties
combo-suited_and_non_suited_match = Une correspondance assortie et une non assortie
combo-one_suited_match = Une correspondance assortie
combo-two_non_suited_matches = Deux correspondances non assorties
combo-one_non_suited_match = Une correspondance non assortie
combo-one_card_spread = Écart d'une carte
combo-two_card_spread = Écart de deux cartes
combo-other_spread = Autre écart
combo-suited_blackjack = Blackjack assorti
combo-same_colour_blackjack = Blackjack de même couleur
combo-diamond_pair = Paire de carreau
combo-one_of_rank = Une carte du rang du pari
combo-suited_pair = Paire assortie
combo-non_suited_pair = Paire non assortie
combo-suited_king_queen = Roi et dame assortis
combo-two_suited = Deux cartes de même enseigne
combo-suited_77 = 7-7 assorti
combo-77 = 7-7
combo-first_card_7 = Première carte un 7
combo-dealer_natural = Blackjack du croupier

## La page publique (/public)

seat-bet = mise
shoe-number = sabot { $shoe }
shoe-out = sorties { $n }
shoe-left = restantes { $n }
public-connecting = connexion…
public-round = tour { $round }
public-betting-open = mises ouvertes
public-under-review = en vérification
public-paused = en pause
public-conn-live = en direct
public-conn-connecting = connexion…
public-conn-reconnecting = reconnexion…
public-results = Résultats
public-no-results = pas encore de résultat
public-cancelled = (annulé, mises remboursées)
public-dealer-total = croupier { $total }
public-provisional = provisoire
public-hand = place { $seat }{ $hand ->
    [0] {""}
   *[other] /{ $hand }
}

## En-tête

page-title = { $table } · { $game }
round-number = Tour { $round }
balance = Solde
total-bet = Mise
session-clock = Session { $time }
menu-help = Règles
menu-history = Historique
menu-language = Langue
menu-close = Fermer
seat-you = Vous

## Prendre place

join-title = Prendre une place
join-none = Aucune place n’est libre pour l’instant. Vous pouvez attendre ici : des places se libèrent entre les tours.
join-seat = Place { $seat }
join-taken = Place { $seat } : occupée
join-behind = Miser derrière d’autres joueurs
join-table = Rejoindre la table
join-second = Prendre une deuxième place
leave = Quitter
left-table = Vous avez quitté la table. Reprenez une place quand vous voulez.
released-away = Cette page n’a pas donné signe de vie pendant { $rounds ->
    [one] un tour entier
   *[other] { $rounds } tours
}.
released-revoked = Le casino a mis fin à votre session précédente.
released-expired = Votre session précédente a expiré.
released-disabled = Votre compte a été désactivé.
released-seat = { $count ->
    [0] Après le tour { $round }, votre présence à la table a pris fin
    [one] Après le tour { $round }, la place { $seats } a été libérée
   *[other] Après le tour { $round }, les places { $seats } ont été libérées
}, et rien n’a été misé pour vous depuis. Prenez une place pour rejouer.

## Mises

bets-open = Faites vos jeux
bets-close-in = Fin des mises dans { $seconds } s
bets-closed = Rien ne va plus
bets-closed-none = Rien ne va plus — vous n’avez pas misé ce tour-ci.
chip-tray = Jetons
chip-value = Jeton de { $amount }
chip-too-big = Ce jeton dépasse ce que vous pouvez encore miser ({ $amount }).
spot-main = Mise principale
spot-side = { $name }
spot-behind = Derrière { $seat }
spot-box = Case { $box }
spot-limits = { $min } – { $max }
spot-empty = Touchez
undo = Annuler
clear = Effacer
repeat = Rejouer { $amount }
double-bets = Doubler
place-bet = Miser { $amount }
place-behind = Miser derrière la place { $seat } : { $amount }
place-boxes = Miser { $amount }
withdraw = Retirer la mise
bet-accepted = Mise acceptée : { $amount }
bet-accepted-rebet = Mise acceptée : { $amount } (votre dernière mise, rejouée)
bet-accepted-clipped = Mise acceptée : { $amount } (votre dernière mise, ramenée à votre solde)
bet-none = Choisissez un jeton, touchez une case, puis Miser.
bet-unplaced = Pas encore placée : touchez « { $button } » pour la placer.
bet-over-balance = Ce serait plus que votre solde ({ $balance }).
bet-over-max = Le maximum sur { $line } est de { $max }.
bet-under-min = Le minimum sur { $line } est de { $min }.
follow-double = Suivre les doublements
follows-double = suit les doublements
follow-split = Suivre les séparations
special-pick = Mise spéciale
let-it-play = Laisser courir { $amount }
second-seat-note = Sur deux places, votre mise va sur les deux (reproduite, ou partagée à parts égales si votre solde ne suffit pas).
my-seats = Place { $seat } : { $amount }

## Décisions

your-turn = À vous · place { $seat }
your-turn-hand = À vous · place { $seat }, main { $hand }
your-box = Case { $box }{ $hand ->
    [0] {""}
   *[other] , main { $hand }
}
insurance-question = Le croupier montre un as : assurance ?
insurance-behind = Derrière la place { $seat } : assurance ?
decide-in = { $seconds } s pour décider
waiting-insurance-others = Les autres joueurs répondent à l’assurance…
action-hit = Carte
action-stand = Rester
action-double = Doubler
action-split = Séparer
action-surrender = Abandonner
action-insurance = Assurance
action-no_insurance = Pas d’assurance
action-even_money = Paiement à égalité
timer-left = { $seconds ->
    [one] { $seconds } seconde restante
   *[other] { $seconds } secondes restantes
}
timeout-stood = Temps écoulé — vous restez sur { $total }.
timeout-auto = Temps écoulé — joué pour vous : { $actions }, puis resté sur { $total }.
timeout-insurance = Temps écoulé — assurance refusée pour vous.
timeout-hit = carte
round-in-play = Tour en cours — le croupier distribue.
round-wait-others = Les autres joueurs décident…
next-round = En attente du prochain tour…

## Résultats

result-title = Tour { $round }
result-win = Vous gagnez { $amount }
result-lose = Vous perdez { $amount }
result-even = Votre mise vous est rendue
result-line = { $line } : { $net }
line-main = Principale
line-insurance = Assurance
line-seat = Place { $seat }
line-behind = Derrière la place { $seat }
line-box = Case { $box }
result-cancelled = Le tour { $round } a été annulé : toutes les mises ont été rendues ({ $amount } pour vous).
result-corrected = Le tour { $round } a été corrigé par un superviseur : votre résultat passe de { $before } à { $after }, votre solde change donc de { $delta }.
result-pending = { $amount } arriveront sur votre solde dès que le résultat sera définitif — dans quelques secondes, après le délai de contestation.
net-plus = +{ $amount }
net-minus = −{ $amount }
net-zero = { $amount }

## Historique

history-title = Vos derniers tours
history-empty = Aucun tour joué à cette table pour l’instant.
history-round = Tour { $round }
history-stake = Mise
history-return = Retour
history-net = Net
history-cancelled = annulé · mises rendues
history-open = en cours
history-signed = signé par la table

## Règles

help-title = Comment jouer au { $game }
help-basics = La main du croupier contre la vôtre : la plus proche de 21 sans le dépasser gagne. Les cartes de 2 à 10 valent leur chiffre, le valet, la dame et le roi 10, l’as 1 ou 11.
help-decks = { $decks ->
    [one] Un jeu de cartes
   *[other] { $decks } jeux de cartes
}{ $fresh ->
    [yes] , mélangés à chaque tour.
   *[no] {"."}
}
help-dealer-s17 = Le croupier reste sur tous les 17.
help-dealer-h17 = Le croupier tire sur 17 souple.
help-blackjack = Le blackjack paie { $pays }.
help-double = Doubler : { $on }{ $after_split ->
    [yes] , aussi après une séparation.
   *[no] {"."}
}
help-double-any_two = sur les deux premières cartes, quelles qu’elles soient
help-double-nine_to_eleven = sur deux premières cartes totalisant 9, 10 ou 11
help-double-ten_or_eleven = sur deux premières cartes totalisant 10 ou 11
help-double-any_cards = avec n’importe quel nombre de cartes
help-surrender-never = non proposé
help-surrender-first_two_cards = sur vos deux premières cartes, après que le croupier a vérifié son blackjack
help-surrender-any_time = à tout moment de votre main
help-ties-push = votre mise vous est rendue
help-ties-lose = le croupier gagne
help-split = Séparer les paires, jusqu’à { $hands } mains.
help-surrender = Abandon : { $when }.
help-insurance = L’assurance contre un as du croupier coûte { $cost } de la mise et paie { $pays }{ $even ->
    [yes] ; le paiement à égalité est proposé sur un blackjack.
   *[no] {"."}
}
help-insurance-none = Pas d’assurance.
help-ties = Égalités : { $ties }.
help-limits = Mises de { $min } à { $max }.
help-timer = Vous avez { $seconds } s pour chaque décision ; passé ce délai, la table joue votre main selon la règle ci-dessous.
help-timeout-stand = Au-delà du délai, votre main reste.
help-timeout-auto = Au-delà du délai, la table joue votre main pour vous : carte tant que vous avez 11 ou moins, puis rester.
help-side-title = { $name } · retour au joueur { $rtp }
help-side-limits = Mises de { $min } à { $max }.
help-paytable-line = { $combination }
help-paytable-pays = paie { $pay }
help-paytable-pays-kept = paie { $pay } ; la mise est conservée
help-rtp-insurance = Assurance · retour au joueur { $rtp }
help-loading = Chargement des règles…
help-unpriced = Le retour de la table de paiement n’a pas pu être calculé.

## États

state-paused-title = Table en pause
state-paused = La table est en pause le temps que le personnel vérifie quelque chose. Vos mises sont en sécurité ; le jeu reprend ici de lui-même.
state-disputed-title = Tour en vérification
state-disputed = Un superviseur vérifie ce tour. Vos mises sont en sécurité ; vous verrez ici ce qu’il décide.
state-broken-title = Table hors service
state-broken = La table est hors service. Vos mises sont en sécurité et seront réglées ou rendues.
state-closed-title = Table fermée
state-closed = Le jeu à distance est fermé à cette table. Votre solde est en sécurité ; revenez quand elle rouvrira.
state-expired-title = Session terminée
state-expired = Votre session est terminée. Rouvrez le jeu depuis le casino pour continuer à jouer.
state-lost-title = Connexion perdue
state-lost = Reconnexion… (essai { $attempt }). Vos mises sont en sécurité : ce que fait la table entre-temps suit ses règles et s’affichera ici dès votre retour.
state-lost-balance = Votre solde s’affichera de nouveau une fois la connexion rétablie.
state-no-token = Ouvrez le jeu depuis le casino pour jouer.
state-connecting = Connexion…

## Point sur le jeu

reality-title = Point sur votre jeu
reality-body = Vous jouez depuis { $minutes ->
    [0] moins d’une minute
    [one] une minute
   *[other] { $minutes } minutes
}. Votre résultat net pour cette session : { $net }.
reality-continue = Continuer à jouer
reality-leave = Quitter

## Erreurs (chaque code que l’API des joueurs peut répondre)

error-network = Pas de connexion avec la table. Nouvel essai…
error-unknown = Cela n’a pas fonctionné. Veuillez réessayer.
error-malformed = Cela n’a pas fonctionné. Rechargez la page et réessayez.
error-unauthenticated = Votre session est terminée. Rouvrez le jeu depuis le casino.
error-no_remote_play = Le jeu à distance est fermé à cette table.
error-insufficient_funds = Solde insuffisant : votre solde est de { $balance }.
error-wallet_conflict = Votre portefeuille traite une autre demande. Réessayez dans un instant.
error-wallet_rolled_back = Votre portefeuille a annulé cette mise : elle n’a pas été placée. Réessayez.
error-wallet_unavailable = Votre portefeuille ne répond pas. Votre mise n’a pas été placée ; réessayez dans un instant.
error-unknown_player = Le casino ne connaît pas votre compte ici. Rouvrez le jeu depuis le casino.
error-player_disabled = Votre compte est bloqué pour le jeu. Contactez le casino.
error-invalid_player = Votre compte ne peut pas jouer ici. Contactez le casino.
error-unavailable = La table n’a pas pu faire cela pour l’instant. Réessayez.
error-betting_closed = Trop tard : les mises sont closes pour ce tour.
error-not_taking_bets = La table ne prend pas de mises pour l’instant.
error-invalid_bet = Cette mise n’est pas permise ici : les mises vont de { $min } à { $max }{ $side ->
    [yes] , les mises annexes seulement avec une mise principale et dans leurs propres limites
   *[no] {""}
}.
error-unknown_side_bet = Cette mise annexe n’est pas proposée à cette table.
error-decision_closed = Trop tard : le temps pour cette décision est écoulé.
error-action_not_allowed = Ce coup n’est pas permis pour cette main maintenant.
error-not_your_turn = Ce n’est pas votre tour.
error-no_seat = Prenez d’abord une place.
error-no_seats = Ce jeu n’a pas de places : rejoignez la table et misez sur les cases.
error-seat_unavailable = Cette place n’est pas ouverte aux joueurs à distance.
error-seat_taken = Quelqu’un vient de prendre cette place. Choisissez-en une autre.
error-already_seated = Vous occupez déjà toutes les places que ce jeu permet.
error-seat_in_play = Vous avez une mise en jeu : vous pourrez partir après le tour.
error-seat_empty = Personne n’a misé sur cette place ce tour-ci : vous ne pouvez pas miser derrière.
error-own_seat = Vous ne pouvez pas miser derrière votre propre place.
error-not_your_seat = Cette place n’est pas la vôtre.
error-no_play_behind = Ce jeu ne permet pas de miser derrière.
error-follow_unavailable = Suivre les doublements ou les séparations de ce joueur n’est pas possible ici.
error-not_common_draw = Ce jeu n’a pas de cases.
error-common_draw = Ce jeu se joue sur des cases : rejoignez la table et misez dessus.
error-json_required = Cela n’a pas fonctionné. Rechargez la page et réessayez.
error-forbidden = Ce n’est pas ouvert aux joueurs.
error-busy = La table est très occupée. Nouvel essai…
error-box_out_of_range = Cette case n’existe pas.
error-no_let_it_play = Ce jeu n’a pas de « Laisser courir ».
error-let_it_play_no_win = « Laisser courir » demande un gain sur cette case au tour précédent.
error-let_it_play_over_limit = Ce gain dépasse la limite de « Laisser courir ».
error-locked = La table est en pause : réessayez quand le jeu reprendra.
error-disputed = Le tour est en vérification : réessayez quand le jeu reprendra.
error-round_provisional = Le dernier tour est encore en confirmation : réessayez dans quelques secondes.
error-out_of_service = La table est hors service.
error-stopped = La table est fermée.
error-card_not_expected = La table n’était pas prête pour cela. Réessayez.
error-impossible_card = La table n’était pas prête pour cela. Réessayez.
error-burn_incomplete = Le croupier brûle encore des cartes : réessayez dans un instant.
error-shoe_finished = Le croupier change de sabot : réessayez dans un instant.
## Ce que la page vérifie elle-même (trust.js ; `trust-CODE`)
trust-seal-sealed = carte cachée scellée · { $commitment }
trust-seal-verified = ✓ sceau de la carte cachée vérifié
trust-seal-corrected = ✓ sceau de la carte cachée vérifié · un superviseur a corrigé la carte de { $from } en { $to }
trust-seal-mismatch = ⚠ LE SCEAU NE CORRESPOND PAS
trust-seal-checking = vérification du sceau…
trust-seal-unchecked = sceau non vérifié (cette page a besoin de HTTPS)
trust-seal-title = engagement { $commitment }
trust-sig-verified = ✓ signé
trust-sig-invalid = ⚠ SIGNATURE INVALIDE
trust-sig-unsigned = ⚠ non signé
trust-alarm-title = ⚠ Échec de la vérification :
trust-timeline-title = Historique de la table restauré :
trust-key-changed = la clé de la table a changé
trust-commitment-changed = tour { $round } : l’engagement de la carte cachée a changé
trust-timeline-back = la chronologie de la table est revenue en arrière
trust-restored = l’historique de la table a été restauré ou repris à sa ligne { $row } : les tours suivants sont rejoués, et vérifiés à nouveau
trust-failed = échec de la vérification : { $error }
trust-missing-result = tour { $round } : aucun résultat n’a été publié
trust-missing-results = tours { $from } à { $to } : aucun résultat n’a été publié
trust-revealed-mismatch = tour { $round } : la carte cachée révélée { $card } ne correspond pas à son sceau
trust-unsigned = tour { $round } : le résultat n’est pas signé
trust-bad-signature = tour { $round } : la signature du résultat ne se vérifie pas
trust-no-seal = tour { $round } : la carte cachée était engagée, et le résultat signé n’ouvre aucun sceau
trust-signed-mismatch = tour { $round } : la carte cachée signée ne correspond pas à son sceau

## Le hall du relais (la page `/` de `croupier relay`)

lobby-title = croupier · tables en direct
lobby-heading = Tables
lobby-col-table = Table
lobby-col-game = Jeu
lobby-col-limits = Mises
lobby-col-seats = Places libres
lobby-col-state = État
lobby-col-round = Tour
lobby-col-news = Dernières nouvelles
lobby-none = Aucune table ne publie encore vers ce relais.
lobby-state-open = Ouverte
lobby-state-locked = En pause (le croupier corrige une carte)
lobby-state-disputed = En pause (un résultat est en vérification)
lobby-state-broken = Hors service
lobby-state-quiet = Sans nouvelles — pas en direct
lobby-ago-now = à l’instant
lobby-ago-s = il y a { $n } s
lobby-ago-min = il y a { $n } min
lobby-ago-h = il y a { $n } h
lobby-side-bets = { $main } · mises annexes { $side }
lobby-seats-free = { $free } sur { $seats }
lobby-seats-common = pas de place à prendre
lobby-error = Le relais ne répond pas ({ $error }) ; nouvel essai.

language-en = English
language-de = Deutsch
language-fr = Français

## Dit aux lecteurs d’écran (les régions live) : cartes, totaux, résultats, pauses

card-name = { $rank ->
    [ace] as
    [king] roi
    [queen] dame
    [jack] valet
   *[number] { $number }
} de { $suit ->
    [spades] pique
    [hearts] cœur
    [diamonds] carreau
   *[clubs] trèfle
}
card-face-down = carte face cachée
say-total = { $kind ->
    [blackjack] blackjack
    [bust] { $total }, brûlé
    [soft] { $total } souple
   *[hard] { $total }
}
say-hand = { $who } : { $cards }
say-seat-hand = Place { $seat }, main { $hand }
say-result = Tour { $round } : { $result }
say-halt = { $title }. { $text }
say-resumed = Le jeu reprend.
dock-label = Votre jeu
mute = Muet
mute-label = Couper les sons et les vibrations
